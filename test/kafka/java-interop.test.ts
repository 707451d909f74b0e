/**
 * Interop with the Java client, which nobody here wrote:
 * - both adapters pick the partition the Java producer's default partitioner picks for a key
 *   (murmur2 of the UTF-8 key bytes, positive, modulo the partition count), for a fixed set of
 *   keys and partition counts, computed by running Java's `Utils.murmur2` / `BuiltInPartitioner`;
 * - a Java `kafka-clients` consumer reads records evgen published: same partition per key as
 *   Java would choose, messageId/eventType headers present, value parses as the envelope.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createEnvelopeParser,
  kafkaRelayPublisher,
  type Envelope,
  type KafkaRoutes,
} from 'evgen/runtime';
import { parseInteropRecords, runJava } from '../support/kafka/java.js';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../support/kafka/test-kafka.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';

const COUNTS = [1, 2, 3, 6, 7, 12, 100];
const KEYS = [
  'a',
  'order-1',
  'order-2',
  '0b1e8f3c-2a4d-4f6e-9a7b-5c3d2e1f0a9b',
  'ünïcödé-ключ-鍵',
  'x'.repeat(257),
  'customer/42?x=1',
  ...Array.from({ length: 40 }, (_, i) => `aggregate-${i * 7919}`),
];

describe('Java client interop', () => {
  it('both adapters partition keys exactly like the Java producer (murmur2)', async () => {
    const lines = (await runJava('KeyPartitions', [...COUNTS.map(String), '--', ...KEYS]))
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t').map(Number));
    expect(lines).toHaveLength(KEYS.length);
    // Not all in one partition: the fixture exercises the hash.
    expect(new Set(lines.map((l) => l[COUNTS.indexOf(12) + 1])).size).toBeGreaterThan(6);
    for (const { name, create } of KAFKA_CLIENTS) {
      const kafka = await createTestKafka(create);
      const producer = await create({ brokers: [kafka.brokers] }).producer();
      try {
        KEYS.forEach((key, k) => {
          const java = lines[k]!.slice(1);
          const ours = COUNTS.map((count) => producer.partitionFor(key, count));
          expect(ours, `${name}: key ${JSON.stringify(key)}`).toEqual(java);
        });
      } finally {
        await producer.close();
        await kafka.cleanup();
      }
    }
  }, 120_000);

  describe.each(KAFKA_CLIENTS)(
    'a Java consumer reads what evgen published: $name',
    ({ create }) => {
      let kafka: TestKafka | undefined;
      afterEach(async () => {
        await kafka?.cleanup();
        kafka = undefined;
      });

      it('same partition per key, messageId/eventType headers, the envelope as value', async () => {
        kafka = await createTestKafka(create);
        const [topic] = await kafka.createTopics([{ topic: 'orders', partitions: 6 }]);
        const producer = await create({ brokers: [kafka.brokers] }).producer();
        const routes: KafkaRoutes = { [orderPlacedV1.eventType]: { topic: 'orders' } };
        const publisher = kafkaRelayPublisher(producer, routes, { prefix: kafka.prefix });
        const envelopes: Envelope[] = [];
        try {
          for (let i = 0; i < 24; i++) {
            const orderId = `order-${i % 8}-${randomUUID()}`;
            const envelope: Envelope = {
              messageId: randomUUID(),
              eventType: orderPlacedV1.eventType,
              schemaVersion: 1,
              aggregateType: 'Order',
              aggregateId: orderId,
              occurredAt: new Date().toISOString(),
              payload: { orderId, amount: i },
            };
            envelopes.push(envelope);
          }
          await Promise.all(
            envelopes.map((envelope, i) =>
              publisher.publish({ outboxId: String(i), envelope, headers: {}, attempts: 0 }),
            ),
          );
        } finally {
          await producer.close();
        }

        const group = kafka.group('java');
        const output = await runJava('InteropConsumer', [kafka.brokers, topic!, group, '24', '6']);
        const records = parseInteropRecords(output);
        expect(records).toHaveLength(24);
        const parse = createEnvelopeParser([orderPlacedV1]);
        const byId = new Map(envelopes.map((e) => [e.messageId, e]));
        for (const record of records) {
          expect(record.partition).toBe(record.javaPartition);
          const envelope = byId.get(record.headers.messageId!)!;
          expect(envelope).toBeDefined();
          expect(record.key).toBe(envelope.aggregateId);
          expect(record.headers.eventType).toBe(orderPlacedV1.eventType);
          const parsed = parse(record.value);
          expect(parsed).toEqual({ ok: true, envelope });
        }
        expect(new Set(records.map((r) => r.headers.messageId)).size).toBe(24);
      }, 120_000);
    },
  );
});
