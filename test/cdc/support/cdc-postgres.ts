/**
 * The CDC relay on real parts for a test file: a private logical-decoding PostgreSQL holding the
 * CDC outbox, a Kafka Connect worker with Debezium beside the test broker, and one connector
 * configured by evgen's connector-config generator. Everything is removed again by `destroy()`:
 * the connector, its replication slot, the worker and its internal topics, the server.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateCdcOutbox, postgresDatabase } from 'evgen/runtime';
import { quoteIdentifier } from '../../../src/runtime/db/sql-identifier.js';
import { connectorConfig } from '../../../src/cdc/connector-config.js';
import {
  startLogicalPostgres,
  type LogicalPostgres,
} from '../../support/connect/logical-postgres.js';
import { TEST_KAFKA_BROKERS } from '../../support/kafka/test-kafka.js';
import {
  ORDER_EVENTS_TOPIC,
  startSourceWorker,
  type CdcSource,
  type CdcSourceOptions,
} from './cdc-source.js';
import { removeWorkerTopics } from './cdc-worker-cleanup.js';

export interface CdcPostgres extends CdcSource {
  readonly kind: 'postgres';
  readonly server: LogicalPostgres;
  readonly pool: pg.Pool;
  readonly slot: string;
  /** Resolves when the connector's replication slot is active (Debezium is reading the log). */
  waitForSlotActive(timeoutMs?: number): Promise<void>;
}

export async function startCdcPostgres(options: CdcSourceOptions = {}): Promise<CdcPostgres> {
  const brokers = options.brokers ?? TEST_KAFKA_BROKERS;
  const server = await startLogicalPostgres();
  const w = await startSourceWorker(server, brokers, options);
  const pool = new pg.Pool({ connectionString: server.url, max: 6 });
  pool.on('error', () => undefined);
  const db = postgresDatabase(pool);
  const suffix = randomBytes(4).toString('hex');
  const connector = `evgen-cdc-${suffix}`;
  const slot = `evgen_cdc_${suffix}`;
  // The connector starts after the table exists (its publication names the table): writes are
  // refused until its slot and publication are there.
  await migrateCdcOutbox(db, { slot, connectorLater: true });

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
    kind: 'postgres',
    server,
    worker: w,
    pool,
    db,
    url: server.url,
    connector,
    slot,
    waitForSlotActive,
    async createOrdersTable() {
      await pool.query('CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, state text)');
    },
    async upsertOrder(tx, id, state) {
      await tx.query(
        `INSERT INTO orders (id, state) VALUES ($1, $2)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state`,
        [id, state],
      );
    },
    async count(table, where) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${quoteIdentifier(table)}${where ? ' WHERE id = $1' : ''}`,
        where ? [where.id] : [],
      );
      return rows[0]!.n;
    },
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
      await w.putConnector(connector, { ...config, ...connectorOptions.overrides });
      await w.waitForRunning(connector);
      await waitForSlotActive();
    },
    async destroy() {
      try {
        await w.deleteConnector(connector).catch(() => undefined);
        await w.destroy();
        // The slot is inactive once the worker is gone; Debezium never drops it itself.
        await server.dropReplicationSlots([slot]);
        await removeWorkerTopics(brokers, w);
      } finally {
        await pool.end().catch(() => undefined);
        await server.destroy();
      }
    },
  };
}
