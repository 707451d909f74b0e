/**
 * Several relays on separate connection pools (as separate processes would be) share one outbox
 * on the real PostgreSQL: each row is published exactly once, and each aggregate in order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingPublisher, createOutboxRelay, outboxStats } from 'evgen/runtime';
import { openOutbox, outboxRows, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import {
  expectEachAggregateInOrder,
  writeInterleavedOrders,
} from './support/interleaved-orders.js';

const ROWS = 400;
const AGGREGATES = 40;
const RELAYS = 4;

// Several sessions on one server (PGlite is one session: no concurrency to test).
describe.each(['postgres', 'mariadb'] as const)('concurrent relays on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it(`publish each of ${ROWS} rows exactly once, in order per aggregate`, async () => {
    const f = (fixture = await openOutbox(dialect, pgliteOnce()));
    await writeInterleavedOrders(f, ROWS, AGGREGATES);
    const publisher = new RecordingPublisher();
    const relays = Array.from({ length: RELAYS }, () =>
      createOutboxRelay({
        db: f.openAnother(3),
        publisher,
        schema: f.schema,
        batchSize: 25,
        concurrency: 4,
        notifyChannel: false,
      }),
    );
    const claimedPerRelay = await Promise.all(
      relays.map(async (relay) => {
        let claimed = 0;
        for (;;) {
          const result = await relay.runOnce();
          claimed += result.claimed;
          expect(result.failed + result.dead).toBe(0);
          if (result.claimed > 0) continue;
          if ((await outboxStats(f.db, { schema: f.schema })).sent === ROWS) return claimed;
          // Everything left is held by another relay (or blocked behind a row it holds).
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }),
    );
    const ids = publisher.published.map((m) => m.envelope.messageId);
    expect(ids).toHaveLength(ROWS);
    expect(new Set(ids).size).toBe(ROWS);
    expect(claimedPerRelay.reduce((a, b) => a + b, 0)).toBe(ROWS);
    // More than one relay did real work (otherwise this proves nothing about concurrency).
    expect(claimedPerRelay.filter((n) => n > 0).length).toBeGreaterThan(1);
    const rows = await outboxRows(f);
    expect(rows.every((r) => r.status === 'SENT' && r.attempts === 1)).toBe(true);
    expectEachAggregateInOrder(publisher.published, ROWS, AGGREGATES);
  });
});
