/** The event every outbox, relay and CDC bench writes: a stock count per SKU (the aggregate). */
import type { EventVersionDescriptor } from '../../src/runtime/index.js';

export interface StockCounted {
  sku: string;
  quantity: number;
}

export type StockCountedDescriptor = EventVersionDescriptor<'bench.StockCounted', 1, StockCounted>;

/** Its descriptor; with a Kafka topic for the writers that route by it (CDC). */
export function stockCountedEvent(kafkaTopic?: string): StockCountedDescriptor {
  return {
    eventType: 'bench.StockCounted',
    schemaVersion: 1,
    aggregateType: 'Stock',
    aggregateIdProperty: 'sku',
    validatePayload: (payload) => ({ ok: true, value: payload as StockCounted }),
    readPayload: (payload) => ({ ok: true, value: payload as StockCounted }),
    ...(kafkaTopic !== undefined ? { kafka: { topic: kafkaTopic } } : {}),
  };
}
