/**
 * The relay behind PgBouncer in transaction mode (PgBouncer 1.18 here: no prepared-statement
 * support, as in 1.21+ with max_prepared_statements = 0): consecutive statements of one
 * node-postgres client run on different server connections, so a statement prepared on one is
 * missing on the next (26000) or already there from another client (42P05). The relay must still
 * publish every row exactly once, in order per aggregate, with no configuration; it reports the
 * switch to unnamed statements once. pgbouncer missing fails the test (CI installs it).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RecordingPublisher,
  createOutboxRelay,
  outboxStats,
  postgresDatabase,
  type OutboxRelay,
} from 'evgen/runtime';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { openOutbox, outboxRows, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import {
  expectEachAggregateInOrder,
  writeInterleavedOrders,
} from './support/interleaved-orders.js';

const ROWS = 300;
const AGGREGATES = 30;
const RELAYS = 2;

const describedError = (error: unknown) =>
  error instanceof Error
    ? `${(error as { code?: string }).code ?? ''} ${error.message}`
    : String(error);

describe('the relay on PostgreSQL behind PgBouncer in transaction pooling mode', () => {
  let fixture: OutboxFixture | undefined;
  let bouncer: PgBouncer | undefined;
  const pools: pg.Pool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));
    await bouncer?.stop();
    bouncer = undefined;
    await fixture?.close();
    fixture = undefined;
  });

  it.each([
    ['with no configuration', undefined],
    ['with preparedStatements: false', false],
  ] as const)(
    `publishes each of ${ROWS} rows exactly once, in order per aggregate, %s`,
    async (_label, preparedStatements) => {
      const f = (fixture = await openOutbox('postgres', pgliteOnce()));
      bouncer = await startPgBouncer({ poolMode: 'transaction', defaultPoolSize: 2 });
      await writeInterleavedOrders(f, ROWS, AGGREGATES);
      const publisher = new RecordingPublisher();
      const errors: unknown[] = [];
      const relays: OutboxRelay[] = Array.from({ length: RELAYS }, () => {
        // Separate pools, as separate processes would have; PgBouncer (no search_path through it)
        // is their only way to the server.
        const pool = new pg.Pool({ connectionString: bouncer!.url, max: 4 });
        pool.on('error', () => undefined);
        pools.push(pool);
        return createOutboxRelay({
          db: postgresDatabase(pool),
          publisher,
          schema: f.schema,
          batchSize: 7,
          maxInFlight: 8,
          pollIntervalMs: 20,
          notifyChannel: false,
          ...(preparedStatements === undefined ? {} : { preparedStatements }),
          hooks: { onError: (error) => errors.push(error) },
        });
      });
      await Promise.all(relays.map((relay) => relay.start()));
      const deadline = Date.now() + 30_000;
      while (
        (await outboxStats(f.db, { schema: f.schema })).sent < ROWS &&
        Date.now() < deadline &&
        // Every claim failing: no point waiting the whole deadline.
        !(publisher.published.length === 0 && errors.length >= 20)
      ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await Promise.all(relays.map((relay) => relay.stop()));

      const reported = errors.map(describedError);
      const ids = publisher.published.map((m) => m.envelope.messageId);
      expect({ published: ids.length, errors: reported.slice(0, 3) }).toEqual({
        published: ROWS,
        errors: expect.anything(),
      });
      expect(new Set(ids).size).toBe(ROWS);
      const rows = await outboxRows(f);
      expect(rows.filter((r) => r.status !== 'SENT')).toEqual([]);
      // A claim that failed on its name did not run: no row was leased twice.
      expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
      expectEachAggregateInOrder(publisher.published, ROWS, AGGREGATES);
      // At most one report per relay: the switch to unnamed statements, naming the pooler; none
      // when preparing is off.
      expect(reported.length).toBeLessThanOrEqual(preparedStatements === false ? 0 : RELAYS);
      for (const message of reported) expect(message).toMatch(/PgBouncer|transaction pooling/);
    },
    60_000,
  );
});

describe('the relay’s prepared statements gone from the server connection (DISCARD ALL)', () => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('the claim gets 26000, runs again unnamed once, and the relay stays unnamed', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    await writeInterleavedOrders(f, ROWS, AGGREGATES);
    // One connection: the relay's client and the DISCARD ALL share it, as a reset pooler would.
    const db = f.openAnother(1);
    const errors: unknown[] = [];
    const relay = createOutboxRelay({
      db,
      publisher: new RecordingPublisher(),
      schema: f.schema,
      batchSize: 10,
      notifyChannel: false,
      hooks: { onError: (error) => errors.push(error) },
    });
    expect((await relay.runOnce()).published).toBe(10);
    const preparedNow = () =>
      db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM pg_prepared_statements WHERE name LIKE 'evgen_%'`,
      );
    expect(Number((await preparedNow()).rows[0]!.n)).toBeGreaterThan(0);
    await db.query('DISCARD ALL');
    for (let round = 0; round < 5; round++) {
      expect((await relay.runOnce()).published).toBe(10);
    }
    expect(errors.map(describedError)).toEqual([
      expect.stringMatching(/SQLSTATE 26000.*PgBouncer/),
    ]);
    // Unnamed from then on: nothing prepared again on the connection.
    expect(Number((await preparedNow()).rows[0]!.n)).toBe(0);
    const rows = await outboxRows(f);
    expect(rows.filter((r) => r.status === 'SENT' && r.attempts === 1)).toHaveLength(60);
    expect(rows.filter((r) => r.attempts > 1)).toEqual([]);
  }, 60_000);
});
