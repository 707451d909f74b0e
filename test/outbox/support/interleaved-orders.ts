/**
 * Outbox rows as a busy service writes them: aggregates interleaved (row i belongs to
 * `order-${i % aggregates}`, amount i), ten events per transaction, no NOTIFY.
 */
import { expect } from 'vitest';
import { writeOutboxEvent, type OutboundMessage } from 'evgen/runtime';
import type { OutboxFixture } from './dialects.js';
import { orderPlacedV1 } from './test-event.js';

export async function writeInterleavedOrders(
  f: OutboxFixture,
  rows: number,
  aggregates: number,
): Promise<void> {
  for (let start = 0; start < rows; start += 10) {
    await f.db.transaction(async (tx) => {
      for (let i = start; i < Math.min(start + 10, rows); i++) {
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: `order-${i % aggregates}`, amount: i },
          {},
          { schema: f.schema, notifyChannel: false },
        );
      }
    });
  }
}

/** Each aggregate's rows were published in the order they were written (amounts ascending). */
export function expectEachAggregateInOrder(
  published: readonly OutboundMessage[],
  rows: number,
  aggregates: number,
): void {
  for (let aggregate = 0; aggregate < aggregates; aggregate++) {
    const amounts = published
      .filter((m) => m.envelope.aggregateId === `order-${aggregate}`)
      .map((m) => (m.envelope.payload as { amount: number }).amount);
    expect(amounts).toEqual(
      Array.from({ length: rows / aggregates }, (_, k) => aggregate + k * aggregates),
    );
  }
}
