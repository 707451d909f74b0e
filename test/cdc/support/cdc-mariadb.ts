/**
 * The CDC relay on MariaDB for a test file: a private mariadbd with a row binlog holding the CDC
 * outbox, a Kafka Connect worker with Debezium's MariaDB connector beside the test broker, and one
 * connector configured by evgen's connector-config generator. Everything is removed again by
 * `destroy()`: the connector, the worker, its internal topics and the connector's schema-history
 * topic, the server.
 *
 * The binlog is what Debezium reads as a replica: ROW format with full row images (the router
 * needs every column of the insert), a server id of its own (the connector's differs), and
 * MariaDB's GTIDs, which every binlog carries.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { migrateCdcOutbox, mysqlDatabase } from 'evgen/runtime';
import { MYSQL_DIALECT } from '../../../src/runtime/db/sql-dialect.js';
import { connectorConfig, heartbeatTopic } from '../../../src/cdc/connector-config.js';
import { confirmCdcConnectorOffsets } from '../../../src/runtime/outbox/cdc-connector-offsets.js';
import { TEST_KAFKA_BROKERS } from '../../support/kafka/test-kafka.js';
import { mariadbPool } from '../../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../../support/mariadb-private.js';
import {
  ORDER_EVENTS_TOPIC,
  startSourceWorker,
  type CdcSource,
  type CdcSourceOptions,
} from './cdc-source.js';
import { removeWorkerTopics } from './cdc-worker-cleanup.js';

/** mariadbd arguments of a CDC source. */
export const BINLOG_SERVER_ARGS = [
  '--log-bin=binlog',
  '--binlog-format=ROW',
  '--binlog-row-image=FULL',
  '--server-id=4242',
] as const;

export interface CdcMariadb extends CdcSource {
  readonly kind: 'mariadb';
  readonly server: PrivateMariadb;
  readonly pool: mysql.Pool;
  /** The connector's schema-history topic. */
  readonly schemaHistoryTopic: string;
}

export async function startCdcMariadb(options: CdcSourceOptions = {}): Promise<CdcMariadb> {
  const brokers = options.brokers ?? TEST_KAFKA_BROKERS;
  const server = await startPrivateMariadb({
    database: 'evgen',
    serverArgs: BINLOG_SERVER_ARGS,
  });
  const w = await startSourceWorker(server, brokers, options);
  const pool = mariadbPool(server.url, 6);
  const db = mysqlDatabase(pool);
  // The connector starts afterwards: writes are refused until its committed offsets are confirmed.
  await migrateCdcOutbox(db, { connectorLater: true });
  const suffix = randomBytes(4).toString('hex');
  const connector = `evgen-cdc-${suffix}`;
  const schemaHistoryTopic = `${connector}.schema-history`;

  /** Debezium reads the binlog as a replica: its connection shows as a binlog dump. */
  const waitForBinlogReader = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [rows] = await pool.query(
        "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
      );
      if (Number((rows as { n: number | string }[])[0]?.n) > 0) return;
      if (Date.now() > deadline) {
        throw new Error(`no binlog reader within ${timeoutMs} ms\n${w.logTail()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  return {
    kind: 'mariadb',
    server,
    worker: w,
    pool,
    db,
    url: server.url,
    connector,
    schemaHistoryTopic,
    async startConnector(connectorOptions = {}) {
      const config = connectorConfig([ORDER_EVENTS_TOPIC], {
        database: 'mariadb',
        name: connector,
        hostname: server.host,
        port: server.port,
        dbname: server.database,
        user: 'root',
        kafkaBootstrapServers: brokers,
        exactlyOnce: connectorOptions.exactlyOnce ?? false,
      });
      await w.putConnector(connector, { ...config, ...connectorOptions.overrides });
      await w.waitForRunning(connector);
      await waitForBinlogReader();
      if (connectorOptions.confirm === false) return;
      // The heartbeat's position is committed at the worker's next offset flush.
      await confirmCdcConnectorOffsets(db, {
        connectUrl: w.restUrl,
        connector,
        waitMs: (options.offsetFlushIntervalMs ?? 1_000) + 60_000,
        pollMs: 250,
      });
    },
    async createOrdersTable() {
      await pool.query(
        'CREATE TABLE IF NOT EXISTS orders (id VARCHAR(64) PRIMARY KEY, state TEXT) DEFAULT CHARSET=utf8mb4',
      );
    },
    async upsertOrder(tx, id, state) {
      await tx.query(
        'INSERT INTO orders (id, state) VALUES (?, ?) ON DUPLICATE KEY UPDATE state = VALUES(state)',
        [id, state],
      );
    },
    async count(table, where) {
      const [rows] = await pool.query(
        `SELECT count(*) AS n FROM ${MYSQL_DIALECT.quoteIdentifier(table)}${where ? ' WHERE id = ?' : ''}`,
        where ? [where.id] : [],
      );
      return Number((rows as { n: number | string }[])[0]?.n);
    },
    async destroy() {
      try {
        await w.deleteConnector(connector).catch(() => undefined);
        await w.destroy();
        await removeWorkerTopics(brokers, w, [schemaHistoryTopic, heartbeatTopic(connector)]);
      } finally {
        await pool.end().catch(() => undefined);
        await server.destroy();
      }
    },
  };
}
