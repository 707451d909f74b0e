/**
 * The CDC outbox deletes its rows in the transaction that writes them: an event exists only in
 * the binlog, as a row event Debezium reads. So on MariaDB the CDC outbox refuses (migration and
 * every write) a server or session whose writes no connector would read:
 * - the machine's shared server, `log_bin` OFF: refused naming log_bin (a restart to change);
 * - a private server with `binlog_format=MIXED`: refused naming binlog_format; in a session set
 *   to ROW, then `binlog_row_image=MINIMAL` and `sql_log_bin=0` are refused by name;
 * - a new CDC outbox: refused until the connector's committed offsets are confirmed (MariaDB
 *   keeps no position for a binlog reader, and a connector that has committed none restarts at
 *   the binlog's end after a crash), even with a binlog reader connected; then accepted, and the
 *   insert is in the binlog; a reader that goes away later (a connector restarting) or the
 *   migration run again refuses nothing; `newConnector` refuses again. (The confirmation through
 *   Kafka Connect: cdc-first-commit-crash.test.ts.)
 * Every refusal leaves 0 rows committed, business rows included. `evgen outbox status --cdc` and
 * `evgen trace --cdc` name the wrong setting, and list the binlog's readers — including one that
 * died without closing, which the server keeps listing until its next binlog write ends it.
 * One private server for the file.
 */
import { randomUUID } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CdcServerNotReadyError,
  migrateCdcOutbox,
  migrateInbox,
  mysqlDatabase,
  writeCdcOutboxEvents,
  type Database,
} from 'evgen/runtime';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import { runCliCaptured } from '../cli/capture-output.js';
import type {
  CdcBinlogStatus,
  CdcOutboxStatusReport,
} from '../../src/runtime/outbox/cdc-outbox-status.js';
import { markAwaitingConnector } from '../../src/runtime/outbox/cdc-server-readiness.js';
import { startBinlogReader } from '../support/binlog-reader.js';
import {
  createMariadbDatabase,
  mariadbPool,
  type TestMariadbDatabase,
} from '../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../support/mariadb-private.js';

const payload = () => ({
  orderId: randomUUID(),
  cancelledAt: '2026-03-01T10:00:00.000Z',
  reason: 'customer_request' as const,
});

/** A business row and a batch of two CDC events in one transaction, as a service writes them. */
function writeOrder(db: Database): Promise<unknown> {
  return db.transaction(async (tx) => {
    await tx.query('INSERT INTO orders (id) VALUES (?)', [randomUUID()]);
    return writeCdcOutboxEvents(tx, [
      { descriptor: orderCancelledV1Descriptor, payload: payload() },
      { descriptor: orderCancelledV1Descriptor, payload: payload() },
    ]);
  });
}

/** `evgen outbox status --cdc --json` of the server at `url`. */
async function cdcStatusJson(
  url: string,
): Promise<CdcOutboxStatusReport & { binlog: CdcBinlogStatus }> {
  const { stdout } = await runCliCaptured(
    'outbox',
    'status',
    '--cdc',
    '--json',
    '--database-url',
    url,
  );
  return JSON.parse(stdout) as CdcOutboxStatusReport & { binlog: CdcBinlogStatus };
}

async function count(pool: mysql.Pool, sql: string): Promise<number> {
  const [rows] = await pool.query(sql);
  return Number((rows as { n: number | string }[])[0]!.n);
}

async function committed(pool: mysql.Pool): Promise<{ orders: number; outbox: number }> {
  return {
    orders: await count(pool, 'SELECT count(*) AS n FROM orders'),
    outbox: await count(pool, 'SELECT count(*) AS n FROM outbox_cdc_event'),
  };
}

async function setUp(db: Database, pool: mysql.Pool): Promise<void> {
  await pool.query('CREATE TABLE orders (id CHAR(36) PRIMARY KEY) ENGINE=InnoDB');
  // `trace` also reads the consumers' inbox.
  await migrateInbox(db);
}

describe('the CDC outbox on MariaDB refuses what no connector would read', () => {
  describe("the machine's server (log_bin OFF)", () => {
    let test: TestMariadbDatabase;
    let db: Database;
    beforeAll(async () => {
      test = await createMariadbDatabase('evgen_cdcoff');
      db = mysqlDatabase(test.pool);
      await setUp(db, test.pool);
    });
    afterAll(() => test?.drop());

    it('migration refused naming log_bin; with connectorLater every write is refused and nothing commits; status and trace name it', async () => {
      const refusal = await migrateCdcOutbox(db).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(CdcServerNotReadyError);
      expect(refusal).toMatchObject({ setting: 'log_bin', value: 'OFF', required: 'ON' });
      expect((refusal as CdcServerNotReadyError).remedy).toMatch(/restart/);
      expect(
        await count(
          test.pool,
          `SELECT count(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${test.schema}' AND TABLE_NAME = 'outbox_cdc_event'`,
        ),
      ).toBe(0);

      await migrateCdcOutbox(db, { connectorLater: true });
      await expect(writeOrder(db)).rejects.toMatchObject({
        name: 'CdcServerNotReadyError',
        setting: 'log_bin',
        value: 'OFF',
      });
      expect(await committed(test.pool)).toEqual({ orders: 0, outbox: 0 });

      const status = await runCliCaptured(
        'outbox',
        'status',
        '--cdc',
        '--database-url',
        test.url,
        '--fail-on-dead',
      );
      expect(status.code).toBe(1);
      expect(status.stdout).toContain('CDC writes: REFUSED');
      expect(status.stdout).toContain('log_bin is OFF, needs ON');
      const trace = await runCliCaptured(
        'trace',
        randomUUID(),
        '--cdc',
        '--database-url',
        test.url,
      );
      expect(trace.stdout).toContain('log_bin is OFF, needs ON');

      // cdc-confirm: bad input and a Connect that does not answer are exit 2, naming the flag.
      const confirm = (...args: string[]) =>
        runCliCaptured('outbox', 'cdc-confirm', '--database-url', test.url, ...args);
      const noUrl = await confirm();
      expect(noUrl.code).toBe(2);
      expect(noUrl.stderr).toContain('--connect-url');
      const badWait = await confirm('--connect-url', 'http://127.0.0.1:9', '--wait', 'soon');
      expect(badWait.code).toBe(2);
      expect(badWait.stderr).toContain('--wait');
      const unreachable = await confirm('--connect-url', 'http://127.0.0.1:9');
      expect(unreachable.code).toBe(2);
      expect(unreachable.stderr).toContain('Kafka Connect does not answer at http://127.0.0.1:9');
    });
  });

  describe('a private server with binlog_format=MIXED', () => {
    let server: PrivateMariadb;
    /** One connection, so the session settings a test makes hold for its writes. */
    let pool: mysql.Pool;
    let db: Database;
    beforeAll(async () => {
      server = await startPrivateMariadb({
        database: 'evgen',
        serverArgs: ['--log-bin=binlog', '--binlog-format=MIXED', '--server-id=4343'],
      });
      pool = mariadbPool(server.url, 1);
      db = mysqlDatabase(pool);
      await setUp(db, pool);
    }, 120_000);
    afterAll(async () => {
      await pool?.end().catch(() => undefined);
      await server?.destroy();
    });

    /** Row events of the CDC outbox in the binlog: what a connector would read. */
    const outboxRowEvents = async () => {
      const [logs] = await pool.query('SHOW BINARY LOGS');
      let n = 0;
      for (const { Log_name } of logs as { Log_name: string }[]) {
        const [events] = await pool.query(`SHOW BINLOG EVENTS IN '${Log_name}'`);
        n += (events as { Event_type: string; Info: string }[]).filter(
          (e) => e.Event_type === 'Table_map' && e.Info.includes('(evgen.outbox_cdc_event)'),
        ).length;
      }
      return n;
    };

    it('refuses binlog_format MIXED, then binlog_row_image and sql_log_bin of the session, then unconfirmed connector offsets, with or without a reader; accepts once confirmed', async () => {
      const refusal = await migrateCdcOutbox(db).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(CdcServerNotReadyError);
      expect((refusal as CdcServerNotReadyError).problems.map((p) => p.setting)).toEqual([
        'binlog_format',
        'binlog reader',
      ]);
      await migrateCdcOutbox(db, { connectorLater: true });

      const refusedWith = async (setting: string, value: string) => {
        const before = await committed(pool);
        await expect(writeOrder(db)).rejects.toMatchObject({
          name: 'CdcServerNotReadyError',
          setting,
          value,
        });
        expect(await committed(pool)).toEqual(before);
        expect(before.outbox).toBe(0);
      };
      await refusedWith('binlog_format', 'MIXED');
      const status = await runCliCaptured(
        'outbox',
        'status',
        '--cdc',
        '--database-url',
        server.url,
      );
      expect(status.stdout).toContain('binlog_format is MIXED, needs ROW');

      await pool.query("SET SESSION binlog_format = 'ROW', SESSION binlog_row_image = 'MINIMAL'");
      await refusedWith('binlog_row_image', 'MINIMAL');
      await pool.query("SET SESSION binlog_row_image = 'FULL', SESSION sql_log_bin = 0");
      await refusedWith('sql_log_bin', '0');
      await pool.query('SET SESSION sql_log_bin = 1');
      // The session's writes would reach the binlog now, but no connector has read it yet: one
      // started later would begin at the binlog's end.
      // The session's writes would reach the binlog now, but no connector has committed a
      // position: one crashing now would restart at the binlog's end.
      const unconfirmed = 'none confirmed since the CDC outbox was created';
      await refusedWith('connector offsets', unconfirmed);
      expect(await outboxRowEvents()).toBe(0);

      const reader = await startBinlogReader(server.url);
      try {
        // A reader is connected, yet nothing says its position is kept anywhere.
        await refusedWith('connector offsets', unconfirmed);
        const status = await runCliCaptured(
          'outbox',
          'status',
          '--cdc',
          '--database-url',
          server.url,
        );
        expect(status.stdout).toContain(`connector offsets is ${unconfirmed}`);
        // What confirmCdcConnectorOffsets does once Connect reports committed offsets (this
        // reader is no connector and has none).
        await markAwaitingConnector(db, '`outbox_cdc_event_aggregate_version`', false);
        await writeOrder(db);
        expect(await committed(pool)).toEqual({ orders: 1, outbox: 0 });
        expect(await outboxRowEvents()).toBe(2); // the insert and the delete
        const listed = await cdcStatusJson(server.url);
        expect(listed.binlog.readers).toBe(1);
        expect(listed.binlog.readerConnections[0]).toMatchObject({
          user: 'root',
          state: expect.stringContaining('waiting'),
        });
      } finally {
        await reader.stop();
      }
      // The reader is gone without closing its connection (SIGTERM; a Connect worker's SIGKILL
      // is the same), yet the server lists its dump thread until it next writes to it: the
      // status names the connection and says what a listed reader does not prove.
      const leftover = await runCliCaptured(
        'outbox',
        'status',
        '--cdc',
        '--database-url',
        server.url,
      );
      expect(leftover.stdout).toMatch(/binlog: 1 reader .*\n {2}reader \d+ from .*user root/);
      expect(leftover.stdout).toContain('stays listed until the server next writes to it');
      // The server's writes to it end it: the first write to a socket the peer closed is accepted
      // (the peer answers with a reset), a later one fails and the dump thread exits.
      const deadline = Date.now() + 20_000;
      while ((await cdcStatusJson(server.url)).binlog.readers > 0 && Date.now() < deadline) {
        await writeOrder(db);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect((await cdcStatusJson(server.url)).binlog.readers).toBe(0);
      // A connector that has committed keeps its position in Kafka: a reader that is gone for a
      // while (a restart) refuses nothing, nor does the migration run again (a deploy).
      await migrateCdcOutbox(db, { connectorLater: true });
      const beforeRestart = await committed(pool);
      await writeOrder(db);
      expect(await committed(pool)).toEqual({ orders: beforeRestart.orders + 1, outbox: 0 });
      // A new connector (or reset offsets) has no position: writes refused until confirmed.
      await migrateCdcOutbox(db, { connectorLater: true, newConnector: true });
      await refusedWith('connector offsets', unconfirmed);
    }, 60_000);
  });
});
