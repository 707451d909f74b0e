/**
 * evgen on a MariaDB server whose `sql_mode` reads SQL differently from the default, as real
 * servers are configured: `NO_BACKSLASH_ESCAPES` (a backslash in a string is a character, not an
 * escape), `ANSI_QUOTES` (a double-quoted word is an identifier) and `ONLY_FULL_GROUP_BY`, a
 * time zone that is not UTC, sessions that start with `autocommit = 0` (a statement outside a
 * transaction opens one that nobody commits) and tables refused without a primary key, set on the
 * server (a private one; the shared server is never reconfigured). And a server whose binary log
 * is written by statement, which cannot run evgen at all: refused at migration, with what to set.
 *
 * mysql2 formats parameters on the client and escapes a quote with a backslash, so on such a
 * server a value holding a backslash and a quote ends its literal and the rest runs as SQL. evgen
 * writes its parameters in as literals that read the same in every mode (mysql-literals.ts). Here
 * the strings an attacker or an ordinary user controls (an event's payload, an Idempotency-Key,
 * a handler's own parameters) go through the writer, the relay, the inbox, a handler, the
 * idempotency store and a data-layer adapter, and come back byte for byte, with no row added.
 */
import { randomUUID } from 'node:crypto';
import knexFactory from 'knex';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InProcessBroker,
  createOutboxRelay,
  findIdempotencyKey,
  migrateIdempotency,
  migrateInbox,
  migrateOutbox,
  mysqlDatabase,
  runIdempotent,
  UnsupportedDatabaseSettingError,
  type Database,
  type OutboxRelay,
} from 'evgen-runtime';
import { knexDatabase, knexTransaction } from 'evgen-runtime/knex';
import {
  createInventoryServiceConsumer,
  type InventoryServiceHandlers,
} from '../../generated/consumers/inventory-service.js';
import { writeOrderCreatedV2 } from '../../generated/order/order-created/outbox.js';
import type { OrderCreatedV2Payload } from '../../generated/order/order-created/types.js';
import { mariadbPool } from '../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../support/mariadb-private.js';
import { uniqueName } from '../support/postgres.js';

const SQL_MODE =
  'ANSI_QUOTES,NO_BACKSLASH_ESCAPES,ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION';

/** Not UTC, as many servers run in their data centre's zone: evgen's times must not move. */
const TIME_ZONE = '+05:30';

/**
 * Formatted by mysql2 as `'\\\'), (0x…) -- '`: under NO_BACKSLASH_ESCAPES the literal ends after
 * three backslashes and a second row, `injected`, follows.
 */
const INJECTION = "\\'), (0x696e6a6563746564) -- ";
/** Everything else a mode or a placeholder scanner could read another way. */
const AWKWARD = `O'Brien "quoted" \`ticks\` \\back\\slash\\ ? ?? $1 -- # /* */ ; \t\n\r\u0000\u001a end`;

let server: PrivateMariadb;
beforeAll(async () => {
  server = await startPrivateMariadb({
    serverArgs: [
      `--sql-mode=${SQL_MODE}`,
      `--default-time-zone=${TIME_ZONE}`,
      '--autocommit=0',
      '--innodb-force-primary-key=ON',
    ],
  });
}, 120_000);
afterAll(async () => {
  await server?.destroy();
});

describe(`MariaDB with sql_mode ${SQL_MODE}`, { timeout: 60_000 }, () => {
  let schema: string;
  let pool: mysql.Pool;
  let db: Database;

  beforeEach(async () => {
    schema = uniqueName('evgen_sqlmode');
    const admin = await mysql.createConnection(server.url);
    await admin.query(`CREATE DATABASE \`${schema}\` DEFAULT CHARACTER SET utf8mb4`);
    await admin.end();
    pool = mariadbPool(server.url.replace(/\/[^/]*$/, `/${schema}`));
    db = mysqlDatabase(pool);
  });
  afterEach(async () => {
    await pool.end();
    const admin = await mysql.createConnection(server.url);
    await admin.query(`DROP DATABASE IF EXISTS \`${schema}\``);
    await admin.end();
  });

  it('is the server this test means: mysql2 formatting its own parameters lets a value inject a row', async () => {
    const [[mode]] = (await pool.query('SELECT @@SESSION.sql_mode AS mode')) as unknown as [
      { mode: string }[],
    ];
    expect(mode!.mode.split(',')).toEqual(expect.arrayContaining(SQL_MODE.split(',')));
    const [[zone]] = (await pool.query('SELECT @@SESSION.time_zone AS zone')) as unknown as [
      { zone: string }[],
    ];
    expect(zone!.zone).toBe(TIME_ZONE);
    const [[autocommit]] = (await pool.query('SELECT @@SESSION.autocommit AS a')) as unknown as [
      { a: number }[],
    ];
    expect(Number(autocommit!.a)).toBe(0);
    await pool.query('COMMIT');
    await pool.query('CREATE TABLE probe (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)');
    const connection = await pool.getConnection();
    await connection.query('INSERT INTO probe (v) VALUES (?)', [INJECTION]);
    await connection.query('COMMIT');
    connection.release();
    const [rows] = (await pool.query('SELECT v FROM probe')) as unknown as [{ v: string }[]];
    expect(rows.map((row) => row.v).sort()).toEqual(['\\\\\\', 'injected']);
  });

  it('keeps a parameter one literal through evgen: the value stored as given, no row added', async () => {
    await db.query('CREATE TABLE probe (id INT PRIMARY KEY, v TEXT, b BLOB, n BIGINT)');
    const values = [INJECTION, AWKWARD, '', "'", '\\', '?'];
    for (const [id, v] of values.entries())
      await db.query('INSERT INTO probe (id, v, b, n) VALUES (?, ?, ?, ?)', [
        id,
        v,
        Buffer.from(v, 'utf8'),
        -id,
      ]);
    const { rows } = await db.query<{ id: number; v: string; b: Buffer; n: string }>(
      'SELECT id, v, b, CAST(n AS CHAR) AS n FROM probe WHERE id IN (?) ORDER BY id',
      [values.map((_, id) => id)],
    );
    expect(rows.map((row) => row.v)).toEqual(values);
    expect(rows.map((row) => Buffer.from(row.b).toString('utf8'))).toEqual(values);
    expect(rows.map((row) => row.n)).toEqual(values.map((_, id) => String(-id)));
    // Found by value, too: the comparison reads the literal as the same string.
    const found = await db.query('SELECT id FROM probe WHERE v = ?', [INJECTION]);
    expect(found.rows).toEqual([{ id: 0 }]);
  });

  it('delivers a payload of such strings writer → relay → inbox → handler unchanged, once', async () => {
    await migrateOutbox(db);
    await migrateInbox(db);
    await db.query('CREATE TABLE delivered (order_id CHAR(36) PRIMARY KEY, line1 TEXT NOT NULL)');
    const received: OrderCreatedV2Payload[] = [];
    const handlers: InventoryServiceHandlers = {
      'order.OrderCancelled': { 1: async () => undefined },
      'order.OrderCreated': {
        2: async (envelope, ctx) => {
          received.push(envelope.payload);
          await ctx.tx.query('INSERT INTO delivered (order_id, line1) VALUES (?, ?)', [
            envelope.payload.orderId,
            envelope.payload.shippingAddress.line1,
          ]);
        },
      },
    };
    const broker = new InProcessBroker({ inProcess: { retryDelaysMs: [0] } });
    broker.subscribe(createInventoryServiceConsumer({ db, handlers }));
    let relay: OutboxRelay | undefined;
    try {
      relay = createOutboxRelay({
        db,
        publisher: broker.relayPublisher(),
        notifyChannel: false,
        pollIntervalMs: 50,
      });
      await relay.start();
      const written = order(INJECTION, AWKWARD);
      const envelope = await db.transaction((tx) => writeOrderCreatedV2(tx, written));
      await broker.waitFor(() => broker.consumed.length >= 1);

      // Published as written: the payload, and the time (the server's zone moved nothing).
      const body = JSON.parse(broker.published[0]!.body) as typeof envelope;
      expect(body.payload).toEqual(written);
      expect(body.occurredAt).toBe(envelope.occurredAt);

      expect(received).toEqual([written]);
      const { rows } = await db.query('SELECT order_id, line1 FROM delivered');
      expect(rows).toEqual([{ order_id: written.orderId, line1: INJECTION }]);
      const outbox = await db.query<{ status: string }>('SELECT status FROM outbox_event');
      expect(outbox.rows).toEqual([{ status: 'SENT' }]);
      expect(broker.deadLettered).toEqual([]);
    } finally {
      await relay?.stop();
      broker.close();
    }
  });

  it('stores and replays an Idempotency-Key holding a backslash and a quote as that one key', async () => {
    await migrateIdempotency(db);
    const key = `k${INJECTION}`;
    const request = { key, fingerprint: 'sha-256:abc' };
    let calls = 0;
    const handler = async () => ({ status: 201, calls: ++calls, echo: AWKWARD });
    const first = await runIdempotent(db, request, handler);
    const second = await runIdempotent(db, request, handler);
    expect(first).toEqual({
      kind: 'fresh',
      result: { status: 201, calls: 1, echo: AWKWARD },
      stored: true,
    });
    expect(second).toEqual({ kind: 'replayed', result: { status: 201, calls: 1, echo: AWKWARD } });
    expect((await findIdempotencyKey(db, key))?.key).toBe(key);
    const { rows } = await db.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM idempotency_key');
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it('commits a statement evgen runs outside a transaction, on its own connection and through Knex', async () => {
    await db.query('CREATE TABLE probe (id INT PRIMARY KEY, v TEXT)');
    await db.query('INSERT INTO probe (id, v) VALUES (?, ?)', [1, 'evgen']);
    const knex = knexFactory({
      client: 'mysql2',
      connection: server.url.replace(/\/[^/]*$/, `/${schema}`),
      pool: { min: 0, max: 2 },
    });
    try {
      await knexDatabase(knex).query('INSERT INTO probe (id, v) VALUES (?, ?)', [2, 'knex']);
    } finally {
      await knex.destroy();
    }
    // Another session sees both: they committed (uncommitted, they would be invisible here and
    // lost when their connections closed).
    const other = await mysql.createConnection(server.url.replace(/\/[^/]*$/, `/${schema}`));
    try {
      const [rows] = await other.query('SELECT id, v FROM probe ORDER BY id');
      expect(rows).toEqual([
        { id: 1, v: 'evgen' },
        { id: 2, v: 'knex' },
      ]);
    } finally {
      await other.end();
    }
  });

  it('writes the same strings through Knex (mysql2 underneath) unchanged', async () => {
    await migrateOutbox(db);
    const knex = knexFactory({
      client: 'mysql2',
      connection: server.url.replace(/\/[^/]*$/, `/${schema}`),
      pool: { min: 0, max: 2 },
    });
    try {
      const written = order(AWKWARD, INJECTION);
      await knex.transaction((trx) => writeOrderCreatedV2(knexTransaction(trx), written));
      const { rows } = await db.query<{ payload: unknown }>('SELECT payload FROM outbox_event');
      // mysql2 hands a JSON column over parsed or as text, depending on the server's column type.
      const payloads = rows.map(({ payload }) =>
        typeof payload === 'string' ? (JSON.parse(payload) as unknown) : payload,
      );
      expect(payloads).toEqual([written]);
    } finally {
      await knex.destroy();
    }
  });
});

function order(line1: string, city: string): OrderCreatedV2Payload {
  return {
    orderId: randomUUID(),
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: { amountMinor: 100, currency: 'EUR' } }],
    total: { amountMinor: 100, currency: 'EUR' },
    shippingAddress: { line1, city, postalCode: '10115', country: 'DE' },
  };
}

describe('MariaDB writing its binary log by statement (binlog_format = STATEMENT)', () => {
  let logging: PrivateMariadb;
  beforeAll(async () => {
    logging = await startPrivateMariadb({
      serverArgs: ['--log-bin=binlog', '--binlog-format=STATEMENT', '--server-id=1'],
    });
  }, 120_000);
  afterAll(async () => {
    await logging?.destroy();
  });

  it('is refused by every migration before it creates anything, saying what to set', async () => {
    const pool = mariadbPool(logging.url);
    const db = mysqlDatabase(pool);
    try {
      // The premise: InnoDB refuses a READ COMMITTED write here, which every evgen write is.
      await db.query('CREATE TABLE t (id INT PRIMARY KEY)');
      await expect(
        db.transaction((tx) => tx.query('INSERT INTO t (id) VALUES (?)', [1])),
      ).rejects.toMatchObject({ errno: 1665 });

      for (const migrate of [migrateOutbox, migrateInbox, migrateIdempotency]) {
        const refusal = await migrate(db).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refusal, migrate.name).toBeInstanceOf(UnsupportedDatabaseSettingError);
        expect(refusal).toMatchObject({ setting: 'binlog_format', value: 'STATEMENT' });
        expect((refusal as Error).message).toMatch(
          /binlog_format = STATEMENT.*error 1665.*Set binlog_format = MIXED \(the default\) or ROW/,
        );
      }
      const { rows } = await db.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> 't'",
      );
      expect(rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
