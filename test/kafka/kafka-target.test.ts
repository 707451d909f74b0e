/**
 * The `kafka` target: generated topics and producer helpers from the example catalog, that they
 * type-check against the runtime, and — against the real broker, per client adapter — that
 * `ensureKafkaTopics` creates what is missing and reports differences, and that a generated
 * producer writes key = aggregateId, the envelope as value and evgen + CloudEvents headers, read
 * back by the `cloudevents` SDK.
 */
import { runTarget } from '../support/run-target.js';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka as CloudEventsKafka } from 'cloudevents';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/model.js';
import { allTargets } from '../../src/codegen/targets/index.js';
import { kafkaTarget } from '../../src/codegen/targets/kafka.js';
import {
  KafkaTopologyMismatchError,
  type Envelope,
  type EnsureKafkaTopicsResult,
  type KafkaAdmin,
  type KafkaProducer,
  type KafkaRoutes,
  type KafkaTopology,
  type KafkaTopologyOptions,
  type PublishKafkaOptions,
} from 'evgen/runtime';
import { type KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { resolveKafkaTopics } from '../../src/runtime/kafka/kafka-topology.js';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';
import { typecheck } from '../support/typecheck.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';

interface Generated {
  kafkaTopology: KafkaTopology;
  ensureKafkaTopics(
    admin: KafkaAdmin,
    options?: KafkaTopologyOptions,
  ): Promise<EnsureKafkaTopicsResult>;
  kafkaRoutes: KafkaRoutes;
  publishOrderCreatedV2(
    producer: KafkaProducer,
    envelope: Envelope,
    options?: PublishKafkaOptions,
  ): Promise<void>;
  orderCreatedV2(payload: unknown, meta?: object): Envelope;
}

let example: GeneratedExample;
let generated: Generated;

beforeAll(async () => {
  example = await generateExample(import.meta.url);
  generated = {
    ...(await example.load<Pick<Generated, 'kafkaTopology' | 'ensureKafkaTopics'>>(
      'kafka/topics.ts',
    )),
    ...(await example.load<Pick<Generated, 'kafkaRoutes' | 'publishOrderCreatedV2'>>(
      'kafka/producers.ts',
    )),
    ...(await example.load<Pick<Generated, 'orderCreatedV2'>>('order/order-created/envelope.ts')),
  };
});
afterAll(() => example?.remove());

describe('kafka target', () => {
  it('is registered and emits topics and producers deterministically', async () => {
    expect(allTargets).toContain(kafkaTarget);
    const context = { catalog: example.catalog, runtimeImport: 'evgen/runtime' };
    const files = await runTarget(kafkaTarget, context);
    expect(files.map((f) => f.path)).toEqual(['kafka/producers.ts', 'kafka/topics.ts']);
    expect(await runTarget(kafkaTarget, context)).toEqual(files);
    expect(
      await runTarget(kafkaTarget, { ...context, catalog: { ...example.catalog, events: [] } }),
    ).toEqual([]);
  });

  it('declares every topic with defaults, each consumer with its ordering, retry and dead-letter topics', () => {
    const { kafkaTopology, kafkaRoutes } = generated;
    expect(kafkaTopology.topics).toEqual([
      {
        topic: 'inventory.events',
        partitions: 6,
        retentionMs: 604_800_000,
        cleanupPolicy: 'delete',
      },
      { topic: 'order.events', partitions: 6, retentionMs: 604_800_000, cleanupPolicy: 'delete' },
    ]);
    const inventory = kafkaTopology.consumers.find((c) => c.name === 'inventory-service')!;
    expect(inventory.subscriptions).toEqual([
      { eventType: 'order.OrderCancelled', topic: 'order.events', ordering: 'strict' },
      { eventType: 'order.OrderCreated', topic: 'order.events', ordering: 'relaxed' },
    ]);
    expect(inventory.retryTopics.map((t) => t.topic)).toEqual([
      'inventory-service.retry.1s',
      'inventory-service.retry.10s',
      'inventory-service.retry.60s',
    ]);
    expect(inventory.deadLetterTopic).toBe('inventory-service.dlt');
    expect(inventory.partitions).toBe(6);
    for (const event of example.catalog.events)
      expect(kafkaRoutes[event.eventType]).toEqual({ topic: event.kafka!.topic });
    // Prefix and other tiers are deployment choices.
    const names = resolveKafkaTopics(kafkaTopology, { prefix: 'p.', tiers: [500] }).map(
      (t) => t.topic,
    );
    expect(names).toEqual([
      'p.inventory-service.dlt',
      'p.inventory-service.retry.500ms',
      'p.inventory.events',
      'p.order.events',
      'p.shipping-service.dlt',
      'p.shipping-service.retry.500ms',
    ]);
  });

  it('takes declared topic settings from any event of the topic; retry topics get the largest partition count', async () => {
    const catalog: Catalog = {
      ...example.catalog,
      events: example.catalog.events.map((e) =>
        e.eventType === 'order.OrderPaid'
          ? { ...e, kafka: { topic: 'order.events', partitions: 12, cleanupPolicy: 'compact' } }
          : e.eventType === 'order.OrderShipped'
            ? { ...e, kafka: { topic: 'order.events', retentionMs: -1 } }
            : e,
      ),
    };
    const [, topics] = await runTarget(kafkaTarget, { catalog, runtimeImport: 'evgen/runtime' });
    expect(topics!.content).toContain(
      "{ topic: 'order.events', partitions: 12, retentionMs: -1, cleanupPolicy: 'compact' },",
    );
    expect(topics!.content).toContain(
      "{ topic: 'inventory.events', partitions: 6, retentionMs: 604800000, cleanupPolicy: 'delete' },",
    );
    expect(topics!.content.match(/partitions: 12,\n/g)).toHaveLength(2);
  });

  it('type-checks; a version helper refuses an envelope of another version or event', () => {
    const good = join(example.dir, 'use-kafka-good.ts');
    writeFileSync(
      good,
      `import { kafkaRelayPublisher, type KafkaClient, type Publisher } from 'evgen/runtime';
import { publishOrderCreatedV2, kafkaRoutes } from './kafka/producers.js';
import { ensureKafkaTopics } from './kafka/topics.js';
import type { OrderCreatedV2Envelope } from './order/order-created/envelope.js';
export async function send(client: KafkaClient, envelope: OrderCreatedV2Envelope): Promise<Publisher> {
  await ensureKafkaTopics(client, { prefix: 't.' });
  const producer = await client.producer();
  await publishOrderCreatedV2(producer, envelope, { headers: { traceparent: 'x' } });
  const topic: 'order.events' = kafkaRoutes['order.OrderCreated'].topic;
  void topic;
  return kafkaRelayPublisher(producer, kafkaRoutes);
}
`,
    );
    expect(typecheck([good])).toEqual([]);
    const bad = join(example.dir, 'use-kafka-bad.ts');
    writeFileSync(
      bad,
      `import type { KafkaProducer } from 'evgen/runtime';
import { publishOrderCreatedV2 } from './kafka/producers.js';
import type { OrderCreatedV1Envelope } from './order/order-created/envelope.js';
import type { OrderPaidEnvelope } from './order/order-paid/envelope.js';
export const v1 = (p: KafkaProducer, e: OrderCreatedV1Envelope) => publishOrderCreatedV2(p, e);
export const paid = (p: KafkaProducer, e: OrderPaidEnvelope) => publishOrderCreatedV2(p, e);
`,
    );
    const diagnostics = typecheck([bad]);
    expect(diagnostics).toHaveLength(2);
    expect(diagnostics[0]).toMatch(/use-kafka-bad\.ts:5 .*OrderCreatedV1/s);
    expect(diagnostics[1]).toMatch(/use-kafka-bad\.ts:6 .*OrderPaid/s);
  });
});

function sampleOrderCreatedV2(meta: object = {}): Envelope {
  const money = { amountMinor: 1250, currency: 'EUR' };
  return generated.orderCreatedV2(
    {
      orderId: randomUUID(),
      customerId: randomUUID(),
      placedAt: new Date().toISOString(),
      channel: 'web',
      lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: money }],
      total: money,
      shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    },
    meta,
  );
}

describe.each(KAFKA_CLIENTS)('generated Kafka code on the real broker: $name', ({ create }) => {
  let kafka: TestKafka | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await kafka?.cleanup();
    kafka = undefined;
  });

  it('ensureKafkaTopics creates every topic as declared, then reports (not accepts) differences', async () => {
    kafka = await createTestKafka(create);
    const prefix = kafka.prefix;
    const wanted = resolveKafkaTopics(generated.kafkaTopology, { prefix });
    for (const spec of wanted) kafka.track('topic', spec.topic);

    const first = await generated.ensureKafkaTopics(kafka.admin, { prefix });
    expect([...first.created].sort()).toEqual(wanted.map((t) => t.topic).sort());
    expect(first.existing).toEqual([]);
    const described = await kafka.admin.describeTopics(wanted.map((t) => t.topic));
    for (const [i, topic] of described.entries()) {
      expect(topic.partitions).toBe(wanted[i]!.partitions);
      expect(topic.configs['retention.ms']).toBe(wanted[i]!.configs!['retention.ms']);
      expect(topic.configs['cleanup.policy']).toBe('delete');
    }
    expect(
      described.find((t) => t.topic === `${prefix}inventory-service.dlt`)!.configs['retention.ms'],
    ).toBe('2419200000');

    const second = await generated.ensureKafkaTopics(kafka.admin, { prefix });
    expect(second.created).toEqual([]);
    expect(second.existing).toHaveLength(wanted.length);

    // Someone created the order topic with fewer partitions and changed a retention by hand.
    const orderTopic = `${prefix}order.events`;
    await kafka.admin.deleteTopics([orderTopic]);
    await waitFor('order topic gone', async () =>
      (await kafka!.admin.listTopics()).includes(orderTopic) ? undefined : true,
    );
    await kafka.admin.createTopics([{ topic: orderTopic, partitions: 2 }]);
    await kafka.admin.alterTopicConfigs(`${prefix}inventory-service.dlt`, {
      'retention.ms': '1000',
    });
    await waitFor('altered retention visible', async () => {
      const [dlt] = await kafka!.admin.describeTopics([`${prefix}inventory-service.dlt`]);
      return dlt!.configs['retention.ms'] === '1000' ? true : undefined;
    });
    const failure = await generated
      .ensureKafkaTopics(kafka.admin, { prefix })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(KafkaTopologyMismatchError);
    const mismatches = (failure as KafkaTopologyMismatchError).mismatches;
    expect(mismatches).toEqual(
      [
        {
          topic: `${prefix}inventory-service.dlt`,
          setting: 'retention.ms',
          declared: '2419200000',
          actual: '1000',
        },
        { topic: orderTopic, setting: 'partitions', declared: '6', actual: '2' },
        { topic: orderTopic, setting: 'retention.ms', declared: '604800000', actual: '604800000' },
      ].filter((m) => m.declared !== m.actual),
    );
    expect((failure as Error).message).toMatch(/order\.events partitions is 2, declared 6/);
    // Left as it was.
    expect((await kafka.admin.describeTopics([orderTopic]))[0]!.partitions).toBe(2);
  });

  it('a generated producer writes key = aggregateId, the envelope, evgen and CloudEvents headers', async () => {
    kafka = await createTestKafka(create);
    const prefix = kafka.prefix;
    const [topic] = await kafka.createTopics([{ topic: 'order.events', partitions: 6 }]);
    const producer = await create({ brokers: [kafka.brokers] }).producer();
    closers.push(() => producer.close());
    const envelopes = [
      sampleOrderCreatedV2({ traceId: 'trace-1', correlationId: 'corr-1', causationId: 'cause-1' }),
      sampleOrderCreatedV2(),
      sampleOrderCreatedV2({ aggregateVersion: 3 }),
    ];
    for (const envelope of envelopes) {
      await generated.publishOrderCreatedV2(producer, envelope, {
        prefix,
        headers: { traceparent: '00-abc-def-01', messageId: 'cannot override' },
      });
    }
    const consumer = create({ brokers: [kafka.brokers] }).consumer({
      groupId: kafka.group('reader'),
      topics: [topic!],
    });
    closers.push(() => consumer.close());
    const records: KafkaInboundRecord[] = [];
    await consumer.start({ onRecord: async (r) => void records.push(r) });
    await waitFor('three records', () => (records.length === 3 ? true : undefined));

    for (const envelope of envelopes) {
      const record = records.find((r) => r.headers.messageId === envelope.messageId)!;
      expect(record.key).toBe(envelope.aggregateId);
      expect(record.partition).toBe(producer.partitionFor(envelope.aggregateId, 6));
      expect(JSON.parse(record.value!.toString('utf8'))).toEqual(envelope);
      const expected: Record<string, string> = {
        traceparent: '00-abc-def-01',
        messageId: envelope.messageId,
        eventType: 'order.OrderCreated',
        schemaVersion: '2',
        aggregateType: 'Order',
        aggregateId: envelope.aggregateId,
        occurredAt: envelope.occurredAt,
        'content-type': 'application/json',
        ce_specversion: '1.0',
        ce_id: envelope.messageId,
        ce_type: 'order.OrderCreated',
        ce_source: '/evgen/Order',
        ce_subject: envelope.aggregateId,
        ce_time: envelope.occurredAt,
      };
      if (envelope.traceId)
        Object.assign(expected, {
          traceId: 'trace-1',
          correlationId: 'corr-1',
          causationId: 'cause-1',
        });
      if (envelope.aggregateVersion !== undefined) expected.aggregateVersion = '3';
      expect(record.headers).toEqual(expected);

      // A client nobody here wrote: the CloudEvents SDK's Kafka binding.
      // The SDK's Kafka message type (key, value, headers, timestamp) is not the declared parameter type.
      const message = {
        key: record.key!,
        value: record.value!,
        headers: record.headers,
        timestamp: record.timestamp,
      };
      const event = CloudEventsKafka.toEvent(
        message as unknown as Parameters<typeof CloudEventsKafka.toEvent>[0],
      );
      const single = Array.isArray(event) ? event[0]! : event;
      expect(single.id).toBe(envelope.messageId);
      expect(single.type).toBe('order.OrderCreated');
      expect(single.subject).toBe(envelope.aggregateId);
      expect(single.source).toBe('/evgen/Order');
      expect(single.specversion).toBe('1.0');
      expect(new Date(single.time!).toISOString()).toBe(
        new Date(envelope.occurredAt).toISOString(),
      );
      expect(single.datacontenttype).toBe('application/json');
      expect(single.data).toEqual(envelope);
    }
  });
});
