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
  writeOutboxEvent,
  type OutboxRelay,
} from 'evgen/runtime';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { openOutbox, outboxRows, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const ROWS = 300;
const AGGREGATES = 30;
const RELAYS = 2;

async function writeRows(f: OutboxFixture): Promise<void> {
  for (let start = 0; start < ROWS; start += 10) {
    await f.db.transaction(async (tx) => {
      for (let i = start; i < start + 10; i++) {
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: `order-${i % AGGREGATES}`, amount: i },
          {},
          { schema: f.schema, notifyChannel: false },
        );
      }
    });
  }
}

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

  it(`publishes each of ${ROWS} rows exactly once, in order per aggregate, with no configuration`, async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    bouncer = await startPgBouncer({ poolMode: 'transaction', defaultPoolSize: 2 });
    await writeRows(f);
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
    console.log(`published ${publisher.published.length}, ${reported.length} errors:\n${reported.join('\n')}`);
    const ids = publisher.published.map((m) => m.envelope.messageId);
    expect({ published: ids.length, errors: reported.slice(0, 3) }).toEqual({
      published: ROWS,
      errors: expect.anything(),
    });
    expect(new Set(ids).size).toBe(ROWS);
    const rows = await outboxRows(f);
    expect(rows.filter((r) => r.status !== 'SENT')).toEqual([]);
    for (let aggregate = 0; aggregate < AGGREGATES; aggregate++) {
      const published = publisher.published
        .filter((m) => m.envelope.aggregateId === `order-${aggregate}`)
        .map((m) => (m.envelope.payload as { amount: number }).amount);
      expect(published).toEqual(
        Array.from({ length: ROWS / AGGREGATES }, (_, k) => aggregate + k * AGGREGATES),
      );
    }
    // At most one report per relay: the switch to unnamed statements, naming the pooler.
    expect(reported.length).toBeLessThanOrEqual(RELAYS);
    for (const message of reported) expect(message).toMatch(/PgBouncer|transaction pooling/);
  }, 60_000);
});
