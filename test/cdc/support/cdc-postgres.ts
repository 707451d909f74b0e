/**
 * The CDC relay on real parts for a test file: a private logical-decoding PostgreSQL holding the
 * CDC outbox, a Kafka Connect worker with Debezium beside the test broker, and one connector
 * configured by evgen's connector-config generator. Everything is removed again by `destroy()`:
 * the connector, its replication slot, the worker and its internal topics, the server.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateCdcOutbox, postgresDatabase, type Database } from 'evgen/runtime';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { connectorConfig, type ConnectorTopic } from '../../../src/cdc/connector-config.js';
import { startConnectWorker, type ConnectWorker } from '../../support/connect/connect-worker.js';
import {
  startLogicalPostgres,
  type LogicalPostgres,
} from '../../support/connect/logical-postgres.js';
import { TEST_KAFKA_BROKERS } from '../../support/kafka/test-kafka.js';

/** The example catalog's order topic, as the generator reads it from the catalog. */
export const ORDER_EVENTS_TOPIC: ConnectorTopic = {
  topic: 'order.events',
  partitions: 6,
  retentionMs: 604_800_000,
  cleanupPolicy: 'delete',
};

export interface CdcPostgres {
  readonly server: LogicalPostgres;
  readonly worker: ConnectWorker;
  readonly pool: pg.Pool;
  /** The database holding the CDC outbox (`public.outbox_cdc_event`). */
  readonly db: Database;
  readonly connector: string;
  readonly slot: string;
  /** Creates the connector (generated config) and waits until its slot streams. */
  startConnector(options?: { readonly exactlyOnce?: boolean }): Promise<void>;
  /** Resolves when the connector's replication slot is active (Debezium is reading the log). */
  waitForSlotActive(timeoutMs?: number): Promise<void>;
  destroy(): Promise<void>;
}

export async function startCdcPostgres(
  options: {
    readonly exactlyOnce?: boolean;
    readonly brokers?: string;
    readonly offsetFlushIntervalMs?: number;
  } = {},
): Promise<CdcPostgres> {
  const brokers = options.brokers ?? TEST_KAFKA_BROKERS;
  const server = await startLogicalPostgres();
  let worker: ConnectWorker | undefined;
  try {
    worker = await startConnectWorker({
      brokers,
      exactlyOnce: options.exactlyOnce ?? false,
      ...(options.offsetFlushIntervalMs !== undefined
        ? { offsetFlushIntervalMs: options.offsetFlushIntervalMs }
        : {}),
      env: { EVGEN_CDC_DB_PASSWORD: '' },
    });
  } catch (error) {
    await server.destroy();
    throw error;
  }
  const pool = new pg.Pool({ connectionString: server.url, max: 6 });
  pool.on('error', () => undefined);
  const db = postgresDatabase(pool);
  await migrateCdcOutbox(db);
  const suffix = randomBytes(4).toString('hex');
  const connector = `evgen-cdc-${suffix}`;
  const slot = `evgen_cdc_${suffix}`;
  const w = worker;

  const waitForSlotActive = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await pool.query<{ active: boolean }>(
        'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      );
      if (rows[0]?.active) return;
      if (Date.now() > deadline) {
        throw new Error(`slot ${slot} not active within ${timeoutMs} ms\n${w.logTail()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  return {
    server,
    worker: w,
    pool,
    db,
    connector,
    slot,
    waitForSlotActive,
    async startConnector(connectorOptions = {}) {
      const config = connectorConfig([ORDER_EVENTS_TOPIC], {
        database: 'postgres',
        name: connector,
        hostname: server.host,
        port: server.port,
        dbname: server.database,
        user: server.user,
        slotName: slot,
        exactlyOnce: connectorOptions.exactlyOnce ?? false,
      });
      await w.putConnector(connector, config);
      await w.waitForRunning(connector);
      await waitForSlotActive();
    },
    async destroy() {
      try {
        await w.deleteConnector(connector).catch(() => undefined);
        await w.destroy();
        // The slot is inactive once the worker is gone; Debezium never drops it itself.
        await server.dropReplicationSlots([slot]);
        const admin = await kafkajsClient({ brokers: [brokers] }).admin();
        try {
          await admin.deleteTopics([...w.internalTopics]).catch(() => undefined);
          await admin.deleteGroups([w.groupId]).catch(() => undefined);
        } finally {
          await admin.close();
        }
      } finally {
        await pool.end().catch(() => undefined);
        await server.destroy();
      }
    },
  };
}
