/**
 * Outbox rows as a busy service writes them: aggregates interleaved (row i belongs to
 * `order-${i % aggregates}`, amount i), ten events per transaction, no NOTIFY.
 */
import { writeOutboxEvent } from 'evgen/runtime';
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
