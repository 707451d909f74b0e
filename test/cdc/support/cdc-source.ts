/**
 * A CDC source for the tests: a private database server whose log Debezium reads (PostgreSQL
 * with logical decoding, or MariaDB with a row binlog), holding the CDC outbox, and a Kafka
 * Connect worker with the Debezium plugins beside the test broker, running one connector made by
 * evgen's connector-config generator. The end-to-end and SIGKILL tests loop over both kinds.
 */
import type { Database } from 'evgen/runtime';
import type { ConnectorTopic } from '../../../src/cdc/connector-config.js';
import {
  startConnectWorker,
  type ConnectWorker,
  type ConnectWorkerOptions,
} from '../../support/connect/connect-worker.js';
import type { CdcMariadb } from './cdc-mariadb.js';
import type { CdcPostgres } from './cdc-postgres.js';

export const CDC_SOURCE_KINDS = ['postgres', 'mariadb'] as const;
export type CdcSourceKind = (typeof CDC_SOURCE_KINDS)[number];

/** The example catalog's order topic, as the generator reads it from the catalog. */
export const ORDER_EVENTS_TOPIC: ConnectorTopic = {
  topic: 'order.events',
  partitions: 6,
  retentionMs: 604_800_000,
  cleanupPolicy: 'delete',
};

export interface CdcSourceOptions {
  readonly exactlyOnce?: boolean;
  readonly brokers?: string;
  readonly offsetFlushIntervalMs?: number;
  /** The worker's JVM flags and extra properties (see ConnectWorkerOptions). */
  readonly worker?: Pick<ConnectWorkerOptions, 'jvmFlags' | 'properties'>;
}

/**
 * Starts the Connect worker beside a source's private server (which the worker's connector will
 * read); when the worker does not start, the server is destroyed before the error is rethrown.
 */
export async function startSourceWorker(
  server: { destroy(): Promise<void> },
  brokers: string,
  options: CdcSourceOptions,
): Promise<ConnectWorker> {
  try {
    return await startConnectWorker({
      brokers,
      exactlyOnce: options.exactlyOnce ?? false,
      ...(options.offsetFlushIntervalMs !== undefined
        ? { offsetFlushIntervalMs: options.offsetFlushIntervalMs }
        : {}),
      env: { EVGEN_CDC_DB_PASSWORD: '' },
      ...options.worker,
    });
  } catch (error) {
    await server.destroy();
    throw error;
  }
}

/** What `startConnector` may change in the generated connector config. */
export interface CdcConnectorOptions {
  readonly exactlyOnce?: boolean;
  /** Keys set on top of the generated config (e.g. a benchmark's producer overrides). */
  readonly overrides?: Readonly<Record<string, string>>;
  /**
   * MariaDB: wait for the connector's first committed offsets and confirm them, so the CDC
   * outbox accepts writes (default true; false leaves writes refused, the connector in its
   * first-offset-commit window).
   */
  readonly confirm?: boolean;
}

export interface CdcSource {
  readonly kind: CdcSourceKind;
  readonly worker: ConnectWorker;
  /** The database holding the CDC outbox (`outbox_cdc_event`, migrated). */
  readonly db: Database;
  /** Its URL (`postgres://…` or `mysql://…`), for the CLI. */
  readonly url: string;
  readonly connector: string;
  /**
   * Creates the connector (generated config) and waits until it reads the log (MariaDB: and
   * until its committed offsets are confirmed, unless `confirm: false`).
   */
  startConnector(options?: CdcConnectorOptions): Promise<void>;
  /** Creates a business table `orders (id, state)` if missing. */
  createOrdersTable(): Promise<void>;
  /** Inserts or updates an `orders` row within `tx`. */
  upsertOrder(
    tx: Parameters<Parameters<Database['transaction']>[0]>[0],
    id: string,
    state: string,
  ): Promise<void>;
  /** Rows of a table (`SELECT count(*)`), e.g. the CDC outbox, which must stay empty. */
  count(table: string, where?: { readonly id: string }): Promise<number>;
  /** Removes the connector, worker, topics, replication slot or schema history, and the server. */
  destroy(): Promise<void>;
}

/** Either source, told apart by `kind` (PostgreSQL has a slot, MariaDB a schema history). */
export type AnyCdcSource = CdcPostgres | CdcMariadb;

export async function startCdcSource(
  kind: CdcSourceKind,
  options: CdcSourceOptions = {},
): Promise<AnyCdcSource> {
  if (kind === 'mariadb') {
    const { startCdcMariadb } = await import('./cdc-mariadb.js');
    return startCdcMariadb(options);
  }
  const { startCdcPostgres } = await import('./cdc-postgres.js');
  return startCdcPostgres(options);
}
