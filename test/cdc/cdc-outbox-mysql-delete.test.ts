/**
 * On MySQL/MariaDB the CDC writer deletes the rows it inserted with a second statement (a trigger
 * may not change its own table). The table is empty between transactions, so its statistics say
 * one row: a `WHERE id IN (…)` delete was planned as a scan of the whole table, which also reads
 * every row deleted before until InnoDB's purge catches up. The writer's DELETE must reach each
 * row through the primary key whatever the statistics say: checked with EXPLAIN on the real
 * server, on a freshly migrated table and after a stream of writes. The CDC outbox writes only
 * where a connector reads the binlog: a private mariadbd with a row binlog and a binlog reader.
 */
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  migrateCdcOutbox,
  mysqlDatabase,
  writeCdcOutboxEvents,
  type Database,
  type Transaction,
} from 'evgen/runtime';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import { markAwaitingConnector } from '../../src/runtime/outbox/cdc-server-readiness.js';
import { startBinlogReader, type BinlogReader } from '../support/binlog-reader.js';
import { mariadbPool } from '../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../support/mariadb-private.js';
import { BINLOG_SERVER_ARGS } from './support/cdc-mariadb.js';

interface ExplainRow {
  readonly table: string;
  readonly type: string;
  readonly key: string | null;
}

const event = (i: number) => ({
  descriptor: orderCancelledV1Descriptor,
  payload: {
    orderId: `0b1e8f3c-2a4d-4f6e-9a7b-${String(i).padStart(12, '0')}`,
    cancelledAt: '2026-03-01T10:00:00.000Z',
    reason: 'customer_request',
  },
});

/**
 * Writes `count` events through writeCdcOutboxEvents in one transaction; just before its DELETE
 * runs (the rows are there), EXPLAINs that statement with its parameters.
 */
async function writeExplainingDelete(db: Database, count: number): Promise<ExplainRow[]> {
  let plan: ExplainRow[] | undefined;
  await db.transaction(async (tx) => {
    const explaining: Transaction = {
      ...tx,
      async query<R>(text: string, params?: readonly unknown[]) {
        if (/^DELETE\b/i.test(text)) {
          plan = (await tx.query<ExplainRow>(`EXPLAIN ${text}`, params)).rows;
        }
        return tx.query<R>(text, params);
      },
    };
    await writeCdcOutboxEvents(
      explaining,
      Array.from({ length: count }, (_, i) => event(i)),
      { topicPrefix: 'test.' },
    );
  });
  if (plan === undefined) throw new Error('the writer ran no DELETE');
  return plan;
}

describe('the CDC writer on MariaDB', () => {
  let server: PrivateMariadb;
  let reader: BinlogReader;
  let pool: mysql.Pool;
  let db: Database;
  beforeAll(async () => {
    server = await startPrivateMariadb({ database: 'evgen', serverArgs: BINLOG_SERVER_ARGS });
    reader = await startBinlogReader(server.url);
    pool = mariadbPool(server.url, 2);
  }, 120_000);
  afterAll(async () => {
    await pool?.end().catch(() => undefined);
    await reader?.stop();
    await server?.destroy();
  });
  beforeEach(async () => {
    db = mysqlDatabase(pool);
    await migrateCdcOutbox(db);
    // A new CDC outbox waits for a connector's committed offsets; this reader is no Debezium
    // connector (no offsets to confirm), so the marker is lifted as a confirmation would.
    await markAwaitingConnector(db, '`outbox_cdc_event_aggregate_version`', false);
  });
  afterEach(async () => {
    await pool.query('DROP TABLE IF EXISTS outbox_cdc_event, outbox_cdc_event_aggregate_version');
  });

  it('deletes the rows it inserted through the primary key, on a fresh table and after a stream of writes', async () => {
    for (const round of ['fresh table', 'after 50 transactions']) {
      if (round !== 'fresh table') {
        for (let i = 0; i < 50; i++) await writeExplainingDelete(db, 100);
      }
      const plan = await writeExplainingDelete(db, 100);
      // The outbox under its alias or its name (the plan also lists the derived table of ids).
      const outbox = plan.find((row) => row.table === 't' || row.table === 'outbox_cdc_event');
      expect({ round, type: outbox?.type, key: outbox?.key }).toEqual({
        round,
        type: 'eq_ref',
        key: 'PRIMARY',
      });
    }
    const [rows] = await pool.query('SELECT count(*) AS n FROM outbox_cdc_event');
    expect(Number((rows as { n: number | string }[])[0]!.n)).toBe(0);
  });
});
