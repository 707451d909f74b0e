/**
 * The two databases the outbox tests run on, both real: PostgreSQL on 127.0.0.1 (a schema per
 * test, dropped afterwards) and PGlite (one instance per test file, a schema per test inside it).
 */
import type { PGlite } from '@electric-sql/pglite';
import { migrateOutbox, pgliteDatabase, postgresDatabase, type Database } from 'evgen/runtime';
import { createTestSchema, uniqueName } from '../../support/postgres.js';
import { startPglite } from '../../support/pglite.js';

export type DialectName = 'postgres' | 'pglite';
export const DIALECTS: readonly DialectName[] = ['postgres', 'pglite'];

export interface OutboxFixture {
  readonly dialect: DialectName;
  readonly db: Database;
  /** Schema holding this test's outbox (passed as `schema` to every outbox call). */
  readonly schema: string;
  /** Another independent Database on the same data (a second pool on PostgreSQL; the same session on PGlite). */
  openAnother(max?: number): Database;
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
  if (dialect === 'postgres') {
    const test = await createTestSchema('evgen_outbox');
    const db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    return {
      dialect,
      db,
      schema: test.schema,
      openAnother: (max = 4) => postgresDatabase(test.newPool(max)),
      channel,
      close: () => test.drop(),
    };
  }
  const instance = await pglite.get();
  const db = pgliteDatabase(instance);
  const schema = uniqueName('evgen_outbox');
  await migrateOutbox(db, { schema });
  return {
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

/** A business table written next to the outbox, to prove both commit or roll back together. */
export async function createOrdersTable(fixture: OutboxFixture): Promise<string> {
  const table = `"${fixture.schema}"."orders"`;
  await fixture.db.query(
    `CREATE TABLE ${table} (order_id text PRIMARY KEY, amount integer NOT NULL)`,
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
  const result = await fixture.db.query<OutboxRowView>(
    `SELECT id::int AS id, event_id::text AS event_id, aggregate_id, aggregate_version::int AS aggregate_version, status, attempts,
       (extract(epoch FROM available_at) * 1000)::float8 AS available_ms,
       (extract(epoch FROM locked_until) * 1000)::float8 AS locked_until_ms,
       last_error,
       (extract(epoch FROM sent_at) * 1000)::float8 AS sent_ms
     FROM "${fixture.schema}"."outbox_event" ORDER BY id`,
  );
  return result.rows.map((row) => ({
    ...row,
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
