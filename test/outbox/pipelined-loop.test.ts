/**
 * The relay loop claims the next batch while the previous one still publishes. These tests
 * check what must not change with that: every row is published once, each aggregate in order,
 * and the in-flight window is shared, never exceeded by the two batches together.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  outboxStats,
  writeOutboxEvent,
  type OutboundMessage,
} from 'evgen/runtime';
import { DIALECTS, openOutbox, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

const ROWS = 300;
const AGGREGATES = 30;

describe.each(DIALECTS)('pipelined relay loop on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('publishes every row once, in order per aggregate, within maxInFlight across batches', async () => {
    const f = (fixture = await openOutbox(dialect, pglite));
    for (let start = 0; start < ROWS; start += 50) {
      await f.db.transaction(async (tx) => {
        for (let i = start; i < start + 50; i++)
          await writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId: `order-${i % AGGREGATES}`, amount: i },
            {},
            { schema: f.schema, notifyChannel: false },
          );
      });
    }
    const published: OutboundMessage[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      notifyChannel: false,
      batchSize: 20,
      maxInFlight: 6,
      publisher: {
        async publish(message) {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 2));
          inFlight--;
          published.push(message);
        },
      },
    });
    await relay.start();
    try {
      for (let tries = 0; tries < 3_000 && published.length < ROWS; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await relay.stop();
    }
    expect(published).toHaveLength(ROWS);
    expect(new Set(published.map((m) => m.envelope.messageId)).size).toBe(ROWS);
    const amounts = new Map<string, number[]>();
    for (const message of published) {
      const payload = message.envelope.payload as { orderId: string; amount: number };
      amounts.set(payload.orderId, [...(amounts.get(payload.orderId) ?? []), payload.amount]);
    }
    for (const [, list] of amounts) expect(list).toEqual([...list].sort((a, b) => a - b));
    expect(maxInFlight).toBeLessThanOrEqual(6);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(await outboxStats(f.db, { schema: f.schema })).toMatchObject({ sent: ROWS });
  });
});
