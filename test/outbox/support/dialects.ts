/**
 * The three databases the outbox tests run on, all real: PostgreSQL on 127.0.0.1 (a schema per
 * test, dropped afterwards), PGlite (one instance per test file, a schema per test inside it) and
 * MariaDB on 127.0.0.1 (a database per test, dropped afterwards).
 */
import type { PGlite } from '@electric-sql/pglite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import {
  migrateOutbox,
  mysqlDatabase,
  pgliteDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
  type PostgresDatabaseOptions,
  type Transaction,
} from 'evgen/runtime';
import { randomUUID } from 'node:crypto';
import type { ClaimedBatch } from '../../../src/runtime/outbox/claim-query.js';
import { outboxTableNames } from '../../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../../src/runtime/outbox/relay-statements.js';
import type { FaultProxy } from '../../support/fault-proxy.js';
import { createMariadbDatabase, mariadbPool } from '../../support/mariadb.js';
import { createTestSchema, TEST_DATABASE_URL, uniqueName } from '../../support/postgres.js';
import { startPglite } from '../../support/pglite.js';
import { orderPlacedV1 } from './test-event.js';

export type DialectName = 'postgres' | 'pglite' | 'mariadb';
export const DIALECTS: readonly DialectName[] = ['postgres', 'pglite', 'mariadb'];

/** Test SQL written once for every dialect: PostgreSQL text, adapted where MariaDB differs. */
export interface DialectSql {
  /** `$n` parameters as `?` on MariaDB (each `$n` used once, in order). */
  readonly sql: (text: string) => string;
  /** `schema.name` quoted for the dialect. */
  readonly table: (name: string) => string;
  /** A column holding a timestamp, as epoch milliseconds (a number expression). */
  readonly epochMs: (column: string) => string;
  /** `text` column type usable in a key (VARCHAR(255) on MariaDB). */
  readonly keyText: string;
}

export function dialectSql(dialect: DialectName, schema: string): DialectSql {
  if (dialect === 'mariadb') {
    return {
      sql: (text) =>
        text.replace(/\$\d+(?:::[a-z0-9_]+)?/g, '?').replace(/::(?:int|text|bigint)/g, ''),
      table: (name) => `\`${schema}\`.\`${name}\``,
      epochMs: (column) => `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', ${column}) / 1000)`,
      keyText: 'VARCHAR(255)',
    };
  }
  return {
    sql: (text) => text,
    table: (name) => `"${schema}"."${name}"`,
    epochMs: (column) => `(extract(epoch FROM ${column}) * 1000)::float8`,
    keyText: 'text',
  };
}

export interface OutboxFixture extends DialectSql {
  readonly dialect: DialectName;
  readonly db: Database;
  /** Schema holding this test's outbox (passed as `schema` to every outbox call). */
  readonly schema: string;
  /** Another independent Database on the same data (a second pool on PostgreSQL; the same session on PGlite). */
  openAnother(max?: number): Database;
  /** The server's URL for a child process (PGlite has none: it lives in this process). */
  readonly url?: string;
  /** A fresh NOTIFY channel name, so tests never wake each other's relays. */
  readonly channel: string;
  close(): Promise<void>;
}

export { uniqueName };

/** One PGlite instance per test file (it costs ~2 s and ~700 MB). */
export function pgliteOnce(): { get(): Promise<PGlite>; close(): Promise<void> } {
  let instance: Promise<PGlite> | undefined;
  return {
    get() {
      instance ??= startPglite();
      return instance;
    },
    async close() {
      if (instance) await (await instance).close();
      instance = undefined;
    },
  };
}

/** Opens a fixture with a migrated outbox. */
export async function openOutbox(
  dialect: DialectName,
  pglite: { get(): Promise<PGlite> },
): Promise<OutboxFixture> {
  const channel = uniqueName('evgen_outbox_t');
  if (dialect === 'mariadb') {
    const test = await createMariadbDatabase('evgen_outbox');
    const db = mysqlDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    return {
      ...dialectSql(dialect, test.schema),
      dialect,
      db,
      schema: test.schema,
      openAnother: (max = 4) => mysqlDatabase(test.newPool(max)),
      url: test.url,
      channel,
      close: () => test.drop(),
    };
  }
  if (dialect === 'postgres') {
    const test = await createTestSchema('evgen_outbox');
    const db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    return {
      ...dialectSql(dialect, test.schema),
      dialect,
      db,
      schema: test.schema,
      openAnother: (max = 4) => postgresDatabase(test.newPool(max)),
      url: TEST_DATABASE_URL,
      channel,
      close: () => test.drop(),
    };
  }
  const instance = await pglite.get();
  const db = pgliteDatabase(instance);
  const schema = uniqueName('evgen_outbox');
  await migrateOutbox(db, { schema });
  return {
    ...dialectSql(dialect, schema),
    dialect,
    db,
    schema,
    openAnother: () => db,
    channel,
    close: async () => {
      await instance.query(`DROP SCHEMA "${schema}" CASCADE`);
    },
  };
}

/**
 * Writes one OrderPlaced event per entry (its orderId, the aggregate), each in its own
 * transaction, in the given order; returns their messageIds. `db` writes through another handle
 * of the same outbox; `assignAggregateVersion` numbers each aggregate's events.
 */
export async function writeOrders(
  f: OutboxFixture,
  orderIds: readonly string[],
  options: { readonly db?: Database; readonly assignAggregateVersion?: boolean } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, orderId] of orderIds.entries()) {
    const envelope = await (options.db ?? f.db).transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId, amount: index },
        {},
        {
          schema: f.schema,
          notifyChannel: f.channel,
          ...(options.assignAggregateVersion === true ? { assignAggregateVersion: true } : {}),
        },
      ),
    );
    ids.push(envelope.messageId);
  }
  return ids;
}

/**
 * The claim tests' cases: each dialect, and PostgreSQL's two ways of finding heads
 * (`fewAggregates`: per aggregate while at most that many have unsent rows; 0: a scan in id order).
 */
export interface ClaimCase {
  readonly dialect: DialectName;
  readonly heads: string;
  /** The PostgreSQL statements' option; undefined on MariaDB. */
  readonly fewAggregates: number | undefined;
}
export const CLAIM_CASES: readonly ClaimCase[] = DIALECTS.flatMap<ClaimCase>((dialect) =>
  dialect === 'mariadb'
    ? [{ dialect, heads: 'as the dialect finds them', fewAggregates: undefined }]
    : [
        { dialect, heads: 'per aggregate', fewAggregates: 32 },
        { dialect, heads: 'by a scan in id order', fewAggregates: 0 },
      ],
);

/**
 * The relay's statements on a fixture's outbox (`fewAggregates` as in ClaimCase), and a claim of
 * `batchSize` with a new lease token and no carried SENT marks; the claim returns that token with
 * its batch (to release or mark what it took).
 */
export function outboxClaims(f: OutboxFixture, fewAggregates?: number) {
  const statements = relayStatements(
    outboxTableNames({ schema: f.schema }, f.db.dialect),
    f.db.dialect,
    fewAggregates === undefined ? {} : { fewAggregates },
  );
  const claim = (
    batchSize: number,
    options: { readonly leaseMs?: number; readonly db?: Database; readonly split?: boolean } = {},
  ): Promise<ClaimedBatch & { readonly token: string }> => {
    const token = randomUUID();
    return statements
      .claim(options.db ?? f.db, {
        batchSize,
        token,
        leaseMs: options.leaseMs ?? 60_000,
        now: null,
        sentIds: [],
        sentToken: null,
        ...(options.split !== undefined ? { split: options.split } : {}),
      })
      .then((batch) => ({ ...batch, token }));
  };
  return { statements, claim };
}

/** Thrown to end `rolledBack`'s transaction. */
class RollBack extends Error {}

/**
 * Runs `work` in a transaction of `db` that is then rolled back, whatever `work` wrote (a claim
 * leases rows): returns what `work` returned; an error of `work` is rethrown.
 */
export async function rolledBack<T>(
  db: Database,
  work: (tx: Transaction) => Promise<T>,
): Promise<T> {
  let result: { readonly value: T } | undefined;
  await db
    .transaction(async (tx) => {
      result = { value: await work(tx) };
      throw new RollBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RollBack)) throw error;
    });
  return result!.value;
}

/** A business table written next to the outbox, to prove both commit or roll back together. */
export async function createOrdersTable(fixture: OutboxFixture): Promise<string> {
  const table = fixture.table('orders');
  await fixture.db.query(
    `CREATE TABLE ${table} (order_id ${fixture.keyText} PRIMARY KEY, amount integer NOT NULL)`,
  );
  return table;
}

export interface OutboxRowView {
  id: number;
  event_id: string;
  aggregate_id: string;
  aggregate_version: number | null;
  status: string;
  attempts: number;
  available_ms: number;
  locked_until_ms: number | null;
  last_error: string | null;
  sent_ms: number | null;
}

/** Every outbox row, in id order, with timestamps as epoch ms. */
export async function outboxRows(fixture: OutboxFixture): Promise<OutboxRowView[]> {
  const { epochMs } = fixture;
  const result = await fixture.db.query<OutboxRowView>(
    fixture.dialect === 'mariadb'
      ? `SELECT id, event_id, aggregate_id, aggregate_version, status, attempts,
       ${epochMs('available_at')} AS available_ms, ${epochMs('locked_until')} AS locked_until_ms,
       last_error, ${epochMs('sent_at')} AS sent_ms
     FROM ${fixture.table('outbox_event')} ORDER BY id`
      : `SELECT id::int AS id, event_id::text AS event_id, aggregate_id, aggregate_version::int AS aggregate_version, status, attempts,
       ${epochMs('available_at')} AS available_ms, ${epochMs('locked_until')} AS locked_until_ms,
       last_error, ${epochMs('sent_at')} AS sent_ms
     FROM ${fixture.table('outbox_event')} ORDER BY id`,
  );
  return result.rows.map((row) => ({
    ...row,
    id: Number(row.id),
    attempts: Number(row.attempts),
    aggregate_version: row.aggregate_version === null ? null : Number(row.aggregate_version),
    available_ms: Number(row.available_ms),
    locked_until_ms: row.locked_until_ms === null ? null : Number(row.locked_until_ms),
    sent_ms: row.sent_ms === null ? null : Number(row.sent_ms),
  }));
}

/** A clock the test moves by hand; starts a second ahead so rows written "now" are already due. */
export function manualClock(): { clock: () => Date; advance(ms: number): void; now(): number } {
  let current = Date.now() + 1_000;
  return {
    clock: () => new Date(current),
    advance(ms) {
      current += ms;
    },
    now: () => current,
  };
}

/** A timer the test fires by hand (`advance`), for the relay's `timers` option: no real waiting. */
export interface ManualTimers {
  readonly timers: {
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
  };
  /** Moves time forward, firing every timer that is then due (in due order), and the clock too if given. */
  advance(ms: number): void;
  /** Timers scheduled and neither fired nor cleared. */
  pending(): number;
}

export function manualTimers(clock?: { advance(ms: number): void }): ManualTimers {
  let now = 0;
  let scheduled: { at: number; callback: () => void }[] = [];
  return {
    timers: {
      setTimeout(callback, ms) {
        const timer = { at: now + ms, callback };
        scheduled.push(timer);
        return timer;
      },
      clearTimeout(handle) {
        scheduled = scheduled.filter((timer) => timer !== handle);
      },
    },
    advance(ms) {
      now += ms;
      clock?.advance(ms);
      const due = scheduled.filter((timer) => timer.at <= now).sort((a, b) => a.at - b.at);
      scheduled = scheduled.filter((timer) => timer.at > now);
      for (const timer of due) timer.callback();
    },
    pending: () => scheduled.length,
  };
}

/**
 * The fixture's database reached through a fault proxy (the server dialects only: PGlite lives in
 * this process), as the relay's only way to it; `postgres` options apply on PostgreSQL.
 */
export function throughProxy(
  f: OutboxFixture,
  proxy: FaultProxy,
  postgres: PostgresDatabaseOptions = {},
): { db: Database; end(): Promise<void> } {
  if (f.dialect === 'mariadb') {
    const pool = mariadbPool(f.url!.replace('127.0.0.1:3306', `127.0.0.1:${proxy.port}`), 4);
    return { db: mysqlDatabase(pool), end: () => pool.end().catch(() => undefined) };
  }
  const pool = new pg.Pool({
    connectionString: TEST_DATABASE_URL.replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`),
    max: 4,
    connectionTimeoutMillis: 2_000,
  });
  pool.on('error', () => undefined);
  return { db: postgresDatabase(pool, postgres), end: () => pool.end().catch(() => undefined) };
}

/**
 * Sessions a MariaDB test opens beside its fixture's pool (a held transaction, a row lock);
 * `endAll()` (in afterEach) ends every one of them.
 */
export function mariadbSessions(): {
  open(fixture: OutboxFixture): Promise<mysql.Connection>;
  endAll(): Promise<void>;
} {
  const opened: mysql.Connection[] = [];
  return {
    async open(fixture) {
      const connection = await mysql.createConnection(fixture.url!);
      opened.push(connection);
      return connection;
    },
    async endAll() {
      await Promise.all(opened.splice(0).map((c) => c.end().catch(() => undefined)));
    },
  };
}
