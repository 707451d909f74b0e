/**
 * A consumer of part of a shared topic, on the real broker with both adapters: `shipping-service`
 * subscribes to order.OrderPaid only of what `order.events` carries. Every other type — ones the
 * catalog knows (OrderCreated, OrderShipped, OrderCancelled), one it does not (OrderRefunded), and
 * a foreign record without an eventType header — is skipped: committed, never retried or
 * dead-lettered. With `ctx.inOrder`, the skipped versions advance the aggregate, so the subscribed
 * OrderPaid events apply in order with no gap error.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  migrateInbox,
  postgresDatabase,
  type Envelope,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
} from 'evgen/runtime';
import { type DeliveryFacts } from '../../src/runtime/delivery/delivery.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { createShippingServiceConsumer } from '../../generated/consumers/shipping-service.js';
import { orderPaidV1 } from '../../generated/order/order-paid/envelope.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../support/kafka/test-kafka.js';
import { createTopicsSettled, waitFor } from './support/inventory-on-kafka.js';

/** Per aggregate, versions 1…6: only 2 and 5 are subscribed. */
const SEQUENCE = [
  { type: 'order.OrderCreated', header: true },
  { type: 'order.OrderPaid', header: true },
  { type: 'order.OrderShipped', header: true },
  { type: 'order.OrderRefunded', header: true }, // unknown to the consumer's catalog
  { type: 'order.OrderPaid', header: true },
  { type: 'order.OrderCancelled', header: false }, // a foreign producer: no eventType header
] as const;

describe.each(KAFKA_CLIENTS)(
  'consumer of part of a shared topic ($name, real broker)',
  ({ create }) => {
    let kafka: TestKafka | undefined;
    let pg: TestSchema | undefined;
    let runner: KafkaConsumerRunner | undefined;

    afterEach(async () => {
      await runner?.stop();
      runner = undefined;
      await kafka?.cleanup();
      kafka = undefined;
      await pg?.drop();
      pg = undefined;
    });

    it('skips and commits unsubscribed and unknown types, dead-letters none, and applies the subscribed ones once, in order, with no gap', async () => {
      kafka = await createTestKafka(create);
      pg = await createTestSchema('evgen_kafka_subset');
      const schema = pg.schema;
      const db = postgresDatabase(pg.pool);
      await migrateInbox(db, { schema });
      await pg.pool.query(
        `CREATE TABLE "${schema}".paid (id serial PRIMARY KEY, order_id text NOT NULL, version int NOT NULL, message_id text NOT NULL)`,
      );
      const [topic, deadLetter, retry] = await createTopicsSettled(kafka, [
        { topic: 'order.events', partitions: 3 },
        { topic: 'shipping-service.dlt', partitions: 1 },
        { topic: 'shipping-service.retry.300ms', partitions: 3 },
      ]);
      const seen: { attempt: number; delivery: DeliveryFacts | undefined }[] = [];
      const handler = createShippingServiceConsumer({
        db,
        inbox: { schema },
        ordering: {},
        handlers: {
          'order.OrderPaid': {
            1: async (envelope, ctx) => {
              seen.push({ attempt: ctx.attempt, delivery: ctx.delivery });
              await ctx.inOrder(async () => {
                await ctx.tx.query(
                  `INSERT INTO "${schema}".paid (order_id, version, message_id) VALUES ($1, $2, $3)`,
                  [envelope.aggregateId, envelope.aggregateVersion, envelope.messageId],
                );
              });
            },
          },
          'inventory.StockReserved': { 1: async () => undefined },
        },
      });
      const events: KafkaConsumerRunnerEvent[] = [];
      runner = createKafkaConsumerRunner({
        handler,
        onEvent: (event) => events.push(event),
        kafka: {
          client: create({ brokers: [kafka.brokers] }),
          routes: {
            consumer: 'shipping-service',
            groupId: `${kafka.prefix}shipping-service`,
            topics: [topic!],
            retry: [{ topic: retry!, delayMs: 300 }],
            deadLetter: deadLetter!,
          },
        },
      });
      await runner.start();

      const producer = await create({ brokers: [kafka.brokers] }).producer({ timeoutMs: 15_000 });
      const orders = Array.from({ length: 5 }, () => randomUUID());
      const paid: string[] = [];
      try {
        for (const orderId of orders) {
          for (const [index, step] of SEQUENCE.entries()) {
            const version = index + 1;
            const envelope: Envelope = {
              ...orderPaidV1(
                {
                  orderId,
                  paymentId: randomUUID(),
                  method: 'card',
                  amount: { amountMinor: 1200, currency: 'EUR' },
                  paidAt: new Date().toISOString(),
                },
                { aggregateVersion: version },
              ),
              eventType: step.type,
            };
            if (step.type === 'order.OrderPaid') paid.push(envelope.messageId);
            const record = envelopeToKafkaRecord(envelope, topic!);
            if (!step.header) {
              const headers = { ...record.headers };
              for (const name of Object.keys(headers))
                if (name !== 'messageId') delete headers[name];
              await producer.send([{ ...record, headers }]);
            } else await producer.send([record]);
          }
        }
      } finally {
        await producer.close();
      }
      const total = orders.length * SEQUENCE.length;

      await waitFor(
        async () => {
          const committed = await kafka!.admin.committedOffsets(
            `${kafka!.prefix}shipping-service`,
            topic!,
          );
          return [...committed.values()].reduce((sum, offset) => sum + Number(offset), 0) === total;
        },
        60_000,
        'every record committed',
      );
      const metrics = runner.metrics();
      expect(metrics).toMatchObject({
        handled: paid.length,
        skipped: total - paid.length,
        retried: 0,
        deadLettered: 0,
      });
      expect(events.filter((e) => e.type === 'retried' || e.type === 'dead-lettered')).toEqual([]);
      const dlt = await kafka.admin.topicOffsets(deadLetter!);
      expect(dlt.map((p) => Number(p.end))).toEqual([0]);
      // Each subscribed event applied once, and per order in version order (2, then 5).
      const { rows } = await pg.pool.query<{
        order_id: string;
        version: number;
        message_id: string;
      }>(`SELECT order_id, version, message_id FROM "${schema}".paid ORDER BY id`);
      expect(rows.map((r) => r.message_id).sort()).toEqual([...paid].sort());
      for (const orderId of orders)
        expect(rows.filter((r) => r.order_id === orderId).map((r) => r.version)).toEqual([2, 5]);
      // The skipped versions were recorded like handled ones: every aggregate is at version 6.
      const versions = await pg.pool.query<{ version: string }>(
        `SELECT version FROM "${schema}".inbox_aggregate_version WHERE consumer = 'shipping-service'`,
      );
      expect(versions.rows.map((r) => Number(r.version))).toEqual(orders.map(() => 6));
      // ctx.attempt and ctx.delivery describe the Kafka record.
      expect(seen).toHaveLength(paid.length);
      for (const { attempt, delivery } of seen) {
        expect(attempt).toBe(1);
        expect(delivery).toMatchObject({ transport: 'kafka', topic, redelivered: false });
        expect(delivery!.partition).toBeGreaterThanOrEqual(0);
        expect(delivery!.offset).toMatch(/^\d+$/);
        expect(delivery!.headers).toHaveProperty('messageId');
      }
    });
  },
);
