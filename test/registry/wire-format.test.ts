/**
 * Confluent's wire format on Kafka, judged by clients nobody here wrote, against the real broker,
 * the real registry (Apicurio 3.0.9) and the real PostgreSQL, with the generated
 * inventory-service consumer:
 *   - records evgen writes (publish helper path and relay publisher) are framed with the id of
 *     the exact version, decode with @kafkajs/confluent-schema-registry and
 *     @confluentinc/schemaregistry, and validate against the registered schema;
 *   - records those clients write, and plain records on the same topic, are consumed by evgen's
 *     consumer with exactly one effect each;
 *   - a schema id that contradicts the envelope is a dead letter, never an effect;
 *   - the registry down when the producer starts: publishes fail as an outage (the relay keeps
 *     the rows) and go out framed once it answers; down later: the cached id is used, no call;
 *   - the catalog chooses what is framed: a project's `wireFormat` and an event's override, pushed
 *     and built with the CLI, framed by the relay exactly as the generated routes mark them, read
 *     back by a plain Kafka consumer and Confluent's deserializer; a marked route without schema
 *     ids and schema ids that would frame nothing are refused before anything is sent.
 */
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import * as kafkajsLib from 'kafkajs';
import { SchemaRegistry as KafkajsRegistry } from '@kafkajs/confluent-schema-registry';
import {
  JsonDeserializer,
  JsonSerializer,
  SchemaRegistryClient as ConfluentRegistryClient,
  SerdeType,
} from '@confluentinc/schemaregistry';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  createSchemaIds,
  kafkaRelayPublisher,
  publishKafkaEnvelope,
  readConfluentFrame,
  SchemaRegistryError,
  type Envelope,
  type KafkaConsumerRunner,
  type KafkaProducer,
  type OutboundMessage,
} from 'evgen/runtime';
import type { KafkaOutboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { startFaultProxy } from '../support/fault-proxy.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
} from '../kafka-consumer/support/inventory-on-kafka.js';
import { SHARED_REGISTRY_PORT } from '../support/registry/apicurio.js';
import { useRegistryTests } from '../support/registry/registry-tests.js';
import { registerExampleEvent } from '../support/registry/register-example-event.js';
import { uniqueDomain } from '../support/registry/test-registry.js';
import { createTestKafka } from '../support/kafka/test-kafka.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { writeFiles } from '../catalog/temp-catalog.js';

const ROOT = join(import.meta.dirname, '../..');
/** Third-party validators run ajv in strict mode by default: x-evgen and formats need it off. */
const AJV = { strict: false };

const tests = useRegistryTests();
let setup: InventoryOnKafka | undefined;
let runner: KafkaConsumerRunner | undefined;
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await setup?.cleanup();
  setup = undefined;
});

/** An outbox row as the relay hands it to its publisher. */
function outbound(envelope: Envelope): OutboundMessage {
  return { outboxId: '1', envelope, headers: {}, attempts: 0 };
}

/** The producer, recording every record it sent (the bytes on the wire). */
function recording(producer: KafkaProducer): {
  producer: KafkaProducer;
  sent: KafkaOutboundRecord[];
} {
  const sent: KafkaOutboundRecord[] = [];
  return {
    sent,
    producer: {
      ...producer,
      send: async (records) => {
        await producer.send(records);
        sent.push(...records);
      },
    },
  };
}

async function startConsumer(s: InventoryOnKafka, marker: string): Promise<KafkaConsumerRunner> {
  runner = createKafkaConsumerRunner({
    handler: s.handler(),
    kafka: {
      client: s.client,
      routes: s.routes,
      schemaIds: createSchemaIds({
        registry: { url: tests.registry.url },
        subjectNameStrategy: ({ eventType }) => `${marker}-${eventType}`,
      }),
    },
  });
  await runner.start();
  return runner;
}

describe('Confluent wire format on Kafka (real broker, real registry)', () => {
  it('evgen writes framed records with the exact version id; both third-party clients decode and validate them; the consumer applies each once', async () => {
    const marker = uniqueDomain();
    const { ids } = await registerExampleEvent(tests, 'order/OrderCancelled', marker);
    const s = (setup = await inventoryOnKafka(kafkajsClient));
    const wireFormat = {
      schemaIds: createSchemaIds({
        registry: { url: tests.registry.url },
        subjectNameStrategy: ({ eventType }: { eventType: string }) => `${marker}-${eventType}`,
      }),
    };
    const { producer, sent } = recording(s.producer);
    // A route the catalog marks framed (as the generated kafkaRoutes do).
    const route = { topic: s.routes.topics[0]!, wireFormat: 'confluent' } as const;
    const { topic } = route;
    // The publish-helper path and the relay's publisher.
    await publishKafkaEnvelope(producer, s.envelope(), route, { wireFormat });
    const relay = kafkaRelayPublisher(producer, { 'order.OrderCancelled': route }, { wireFormat });
    await Promise.all([
      relay.publish(outbound(s.envelope())),
      relay.publish(outbound(s.envelope())),
    ]);
    expect(sent).toHaveLength(3);
    for (const record of sent) {
      const frame = readConfluentFrame(record.value as Buffer);
      expect(frame?.schemaId).toBe(ids[0]);
    }

    const kafkajs = new KafkajsRegistry({ host: tests.registry.url }, { JSON: AJV });
    const confluent = new ConfluentRegistryClient({ baseURLs: [tests.registry.url] });
    const deserializer = new JsonDeserializer(confluent, SerdeType.VALUE, {
      validate: true,
      ...AJV,
    });
    for (const record of sent) {
      const envelope = JSON.parse((record.value as Buffer).subarray(5).toString('utf8')) as unknown;
      expect(await kafkajs.decode(record.value as Buffer)).toEqual(envelope);
      expect(await deserializer.deserialize(topic, record.value as Buffer)).toEqual(envelope);
    }

    const consumer = await startConsumer(s, marker);
    await waitFor(() => consumer.metrics().handled === 3, 60_000, '3 records handled');
    const effects = await s.effects();
    expect(effects.size).toBe(3);
    expect([...effects.values()]).toEqual([1, 1, 1]);
  });

  it('records written by the kafkajs and Confluent clients, and plain ones, on one topic: each applied exactly once; a contradicting id is a dead letter', async () => {
    const marker = uniqueDomain();
    const { subject, ids } = await registerExampleEvent(tests, 'order/OrderCancelled', marker);
    const created = await registerExampleEvent(tests, 'order/OrderCreated', marker);
    const s = (setup = await inventoryOnKafka(kafkajsClient));
    const topic = s.routes.topics[0]!;

    const kafkajs = new KafkajsRegistry({ host: tests.registry.url }, { JSON: AJV });
    const confluent = new ConfluentRegistryClient({ baseURLs: [tests.registry.url] });
    const serializer = new JsonSerializer(confluent, SerdeType.VALUE, {
      autoRegisterSchemas: false,
      useSchemaId: ids[0],
      // The subject evgen registered under (Confluent's default would be `<topic>-value`).
      subjectNameStrategy: () => subject,
      validate: true,
      ...AJV,
    });
    // A value that does not match the registered schema is refused by the client itself.
    await expect(kafkajs.encode(ids[0]!, { ...s.envelope(), payload: {} })).rejects.toThrow();

    const byKafkajs = s.envelope();
    const byConfluent = s.envelope();
    const plain = s.envelope();
    const contradicting = s.envelope();
    // Foreign producers send no evgen headers: the value alone must do.
    await s.publishRaw(byKafkajs.aggregateId, (await kafkajs.encode(ids[0]!, byKafkajs)) as never);
    await s.publishRaw(
      byConfluent.aggregateId,
      (await serializer.serialize(topic, byConfluent)) as never,
    );
    await s.send(plain);
    // Framed with OrderCreated v1's id but carrying an OrderCancelled envelope.
    const wrong = Buffer.concat([
      Buffer.from([0, 0, 0, 0, 0]),
      Buffer.from(JSON.stringify(contradicting)),
    ]);
    wrong.writeInt32BE(created.ids[0]!, 1);
    await s.publishRaw(contradicting.aggregateId, wrong as never);

    const consumer = await startConsumer(s, marker);
    await waitFor(
      () => consumer.metrics().handled === 3 && consumer.metrics().deadLettered === 1,
      60_000,
      '3 handled and 1 dead letter',
    );
    const effects = await s.effects();
    expect(new Map(effects)).toEqual(
      new Map([
        [byKafkajs.messageId, 1],
        [byConfluent.messageId, 1],
        [plain.messageId, 1],
      ]),
    );

    // The operator sees the framed dead letter (no headers: its messageId is in the framed JSON)
    // with its schema id and the envelope as text.
    const dlq = (...args: string[]) =>
      runCliCaptured(
        'dlq',
        ...args,
        '--events',
        join(ROOT, 'events'),
        '--transport',
        'kafka',
        '--kafka-brokers',
        s.kafka.brokers,
        '--kafka-tiers',
        '300,600',
        '--prefix',
        s.kafka.prefix,
      );
    const listed = await dlq('list', '--consumer', 'inventory-service', '--json');
    expect(listed.stderr).toBe('');
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        consumer: 'inventory-service',
        messageId: contradicting.messageId,
        schemaId: created.ids[0],
        body: JSON.stringify(contradicting),
      },
    ]);
    const shown = await dlq('show', contradicting.messageId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`schemaId: ${created.ids[0]}`);
    expect(shown.stdout).toContain(`"messageId":"${contradicting.messageId}"`);
  });

  it('registry down when the producer starts: publishes fail as an outage, then go out framed; down later: the cached id is used', async () => {
    const marker = uniqueDomain();
    const { ids } = await registerExampleEvent(tests, 'order/OrderCancelled', marker);
    const proxy = await startFaultProxy({ targetPort: SHARED_REGISTRY_PORT });
    try {
      await proxy.refuse();
      const s = (setup = await inventoryOnKafka(kafkajsClient));
      const topic = s.routes.topics[0]!;
      const { producer, sent } = recording(s.producer);
      const schemaIds = createSchemaIds({
        registry: {
          url: `http://127.0.0.1:${proxy.port}/apis/ccompat/v7`,
          retries: 0,
          timeoutMs: 2_000,
        },
        subjectNameStrategy: ({ eventType }) => `${marker}-${eventType}`,
      });
      const relay = kafkaRelayPublisher(
        producer,
        { 'order.OrderCancelled': { topic, wireFormat: 'confluent' } },
        { wireFormat: { schemaIds } },
      );
      const failure = await relay.publish(outbound(s.envelope())).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SchemaRegistryError);
      expect(failure).toMatchObject({ kind: 'unreachable', retryable: true, unavailable: true });
      expect(sent).toHaveLength(0); // nothing went out unframed instead

      await proxy.restore();
      await relay.publish(outbound(s.envelope()));
      await proxy.refuse();
      await relay.publish(outbound(s.envelope()));
      expect(sent.map((record) => readConfluentFrame(record.value as Buffer)?.schemaId)).toEqual([
        ids[0],
        ids[0],
      ]);
    } finally {
      await proxy.close();
    }
  });
});

/** Every record value on `topic`, read from the start by a plain kafkajs consumer of its own. */
async function readValues(brokers: string, topic: string, count: number): Promise<Buffer[]> {
  const kafka = new kafkajsLib.Kafka({
    clientId: 'evgen-wire-format-reader',
    brokers: [brokers],
    logLevel: kafkajsLib.logLevel.NOTHING,
  });
  const values: Buffer[] = [];
  const consumer = kafka.consumer({ groupId: `${topic}.reader` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        values.push(message.value!);
        return Promise.resolve();
      },
    });
    await waitFor(() => values.length >= count, 60_000, `${count} records read back`);
  } finally {
    await consumer.disconnect();
  }
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([`${topic}.reader`]).catch(() => undefined);
  await admin.disconnect();
  return values;
}

describe('the catalog chooses the wire format (real CLI, registry, broker)', () => {
  it("config wireFormat confluent with one event overriding json: build marks the routes, the relay frames exactly the marked event, a plain consumer and Confluent's deserializer read both", async () => {
    const project = await tests.project();
    const { domain, dir } = project;
    const shipped = project.files[`${domain}/Shipped/event.json`] as { kafka: object };
    await writeFiles(join(dir, 'events'), {
      [`${domain}/Shipped/event.json`]: {
        ...shipped,
        kafka: { ...shipped.kafka, wireFormat: 'json' },
      },
    });
    await writeFiles(dir, {
      'evgen.config.json': {
        wireFormat: 'confluent',
        targets: ['types', 'validators', 'envelopes', 'kafka'],
      },
    });
    const push = await project.registry('push');
    expect(push.stderr).toBe('');
    expect(push.code).toBe(0);
    const build = await runCliCaptured(
      'build',
      '--config',
      join(dir, 'evgen.config.json'),
      '--no-cache',
    );
    expect(build.stderr).toBe('');
    expect(build.code).toBe(0);
    const { kafkaRoutes } = (await import(join(dir, 'generated/kafka/producers.ts'))) as {
      kafkaRoutes: Record<string, { topic: string; wireFormat?: 'confluent' }>;
    };
    expect(kafkaRoutes).toEqual({
      [`${domain}.Placed`]: { topic: `${domain}.events`, wireFormat: 'confluent' },
      [`${domain}.Shipped`]: { topic: `${domain}.events` },
    });

    const kafka = await createTestKafka(kafkajsClient);
    const client = kafkajsClient({ brokers: [kafka.brokers] });
    const producer = await client.producer({ timeoutMs: 15_000 });
    tests.afterwards(async () => {
      await producer.close();
      await kafka.cleanup();
    });
    const [topic] = await kafka.createTopics([{ topic: `${domain}.events`, partitions: 1 }]);

    // Refused before anything is sent: the catalog frames Placed, and no ids were given.
    expect(() => kafkaRelayPublisher(producer, kafkaRoutes, { prefix: kafka.prefix })).toThrow(
      new RegExp(`the catalog writes ${domain}\\.Placed in Confluent's wire format`),
    );
    const envelope = (eventType: string, schemaVersion: number): Envelope => {
      const orderId = randomUUID();
      return {
        messageId: randomUUID(),
        eventType,
        schemaVersion,
        aggregateType: 'Order',
        aggregateId: orderId,
        occurredAt: '2026-01-02T03:04:05Z',
        payload: eventType.endsWith('Placed')
          ? { orderId, total: { amount: 100, currency: 'EUR' }, note: 'framed' }
          : { orderId, carrier: 'plain' },
      };
    };
    await expect(
      publishKafkaEnvelope(
        producer,
        envelope(`${domain}.Placed`, 2),
        kafkaRoutes[`${domain}.Placed`]!,
        {
          prefix: kafka.prefix,
        },
      ),
    ).rejects.toThrow(TypeError);
    // Ids that would frame nothing are refused too.
    const schemaIds = createSchemaIds({ registry: { url: tests.registry.url } });
    expect(() =>
      kafkaRelayPublisher(
        producer,
        { [`${domain}.Shipped`]: kafkaRoutes[`${domain}.Shipped`]! },
        { wireFormat: { schemaIds } },
      ),
    ).toThrow(/no record would be framed/);

    const relay = kafkaRelayPublisher(producer, kafkaRoutes, {
      prefix: kafka.prefix,
      wireFormat: { schemaIds },
    });
    const placed = envelope(`${domain}.Placed`, 2);
    const plain = envelope(`${domain}.Shipped`, 1);
    await relay.publish(outbound(placed));
    await relay.publish(outbound(plain));
    // eventTypes override the marks: Shipped framed, Placed plain.
    const swapped = kafkaRelayPublisher(producer, kafkaRoutes, {
      prefix: kafka.prefix,
      wireFormat: { schemaIds, eventTypes: [`${domain}.Shipped`] },
    });
    const placedPlain = envelope(`${domain}.Placed`, 1);
    const shippedFramed = envelope(`${domain}.Shipped`, 1);
    await swapped.publish(outbound(placedPlain));
    await swapped.publish(outbound(shippedFramed));

    const values = await readValues(kafka.brokers, topic!, 4);
    expect(values).toHaveLength(4);
    const placedV2 = (await tests.registry.client.version(`${domain}.Placed`, 2))!;
    const shippedV1 = (await tests.registry.client.version(`${domain}.Shipped`, 1))!;
    expect(values.map((value) => readConfluentFrame(value)?.schemaId)).toEqual([
      placedV2.id,
      undefined,
      undefined,
      shippedV1.id,
    ]);
    expect(JSON.parse(values[1]!.toString('utf8'))).toEqual(plain);
    expect(JSON.parse(values[2]!.toString('utf8'))).toEqual(placedPlain);
    const deserializer = new JsonDeserializer(
      new ConfluentRegistryClient({ baseURLs: [tests.registry.url] }),
      SerdeType.VALUE,
      { validate: true, ...AJV },
    );
    expect(await deserializer.deserialize(topic!, values[0]!)).toEqual(placed);
    expect(await deserializer.deserialize(topic!, values[3]!)).toEqual(shippedFramed);
  });
});
