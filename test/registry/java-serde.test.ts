/**
 * Confluent's framing judged by a Java serde nobody here wrote: Apicurio's JSON Schema serde for
 * Kafka (Maven Central; test/support/registry/java-serde.ts), against the real broker, the real
 * registry (Apicurio 3.0.9: evgen pushes through its Confluent API, the serde reads its own API)
 * and the real PostgreSQL, with the example catalog's generated inventory-service consumer:
 *   - rows the outbox relay framed are read by the serde's deserializer with validation on: the
 *     key, the id and the envelope as written; a framed one that breaks the schema is refused; a
 *     plain record is refused as the serde comes, and read once the version evgen pushed is its
 *     fallback artifact (what a Java consumer of a topic migrating record by record needs);
 *   - records the serde's serializer wrote (each sent twice, as a producer retry would) are
 *     consumed by evgen's consumer with exactly one effect each; a value that breaks the schema is
 *     refused by the serializer and never sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  createOutboxRelay,
  createSchemaIds,
  kafkaRelayPublisher,
  migrateOutbox,
  writeOutboxEvent,
  type Envelope,
  type KafkaConsumerRunner,
} from 'evgen/runtime';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
} from '../kafka-consumer/support/inventory-on-kafka.js';
import {
  CCOMPAT_GROUP,
  runApicurioSerde,
  SERDE_REGISTRY_URL,
  serdeLines,
} from '../support/registry/java-serde.js';
import { registerExampleEvent } from '../support/registry/register-example-event.js';
import { useRegistryTests } from '../support/registry/registry-tests.js';
import { uniqueDomain } from '../support/registry/test-registry.js';

const tests = useRegistryTests();
let setup: InventoryOnKafka | undefined;
let runner: KafkaConsumerRunner | undefined;
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await setup?.cleanup();
  setup = undefined;
});

const schemaIdsFor = (marker: string) =>
  createSchemaIds({
    registry: { url: tests.registry.url },
    subjectNameStrategy: ({ eventType }) => `${marker}-${eventType}`,
  });

/** The envelope with a payload the registered schema refuses (orderId and more are required). */
const breaking = (envelope: Envelope): Envelope => ({ ...envelope, payload: {} });

describe("Apicurio's Java serde and evgen on one topic (real broker, real registry)", () => {
  it('reads what the outbox relay framed, validated, with the exact version id; a schema-breaking record is refused, a plain one read only through its fallback artifact', async () => {
    const marker = uniqueDomain();
    const { subject, ids } = await registerExampleEvent(tests, 'order/OrderCancelled', marker);
    const s = (setup = await inventoryOnKafka(kafkajsClient));
    await migrateOutbox(s.db, { schema: s.schema });
    const written = await s.db.transaction(async (tx) => {
      const envelopes: Envelope[] = [];
      for (let i = 0; i < 6; i++)
        envelopes.push(
          await writeOutboxEvent(
            tx,
            orderCancelledV1Descriptor,
            {
              orderId: s.envelope().aggregateId,
              cancelledAt: '2026-01-02T03:04:05.000Z',
              reason: 'customer_request',
              note: `row ${i}`,
            },
            {},
            { schema: s.schema, notifyChannel: false },
          ),
        );
      return envelopes;
    });
    const relay = createOutboxRelay({
      db: s.db,
      schema: s.schema,
      notifyChannel: false,
      publisher: kafkaRelayPublisher(
        s.producer,
        // The route as the generated kafkaRoutes write it for an event marked confluent.
        { 'order.OrderCancelled': { topic: 'order.events', wireFormat: 'confluent' } },
        { prefix: s.kafka.prefix, wireFormat: { schemaIds: schemaIdsFor(marker) } },
      ),
    });
    let published = 0;
    while (published < written.length) {
      const result = await relay.runOnce();
      expect(result.failed).toBe(0);
      published += result.published;
    }
    const plain = await s.publish();
    const broken = breaking(s.envelope());
    const framed = Buffer.concat([
      Buffer.from([0, 0, 0, 0, 0]),
      Buffer.from(JSON.stringify(broken)),
    ]);
    framed.writeInt32BE(ids[0]!, 1);
    await s.publishRaw(broken.aggregateId, framed as never);

    const read = async (name: string, fallback: string[] = []) => {
      const lines = serdeLines(
        await runApicurioSerde([
          'read',
          s.kafka.brokers,
          s.routes.topics[0]!,
          s.kafka.group(name),
          String(written.length + 2),
          SERDE_REGISTRY_URL,
          ...fallback,
        ]),
      );
      expect(lines).toHaveLength(written.length + 2);
      const outcome = (wanted: string) => lines.filter(([kind]) => kind === wanted);
      return {
        ok: new Map(
          outcome('ok').map(([, , key, id, value]) => [
            key!,
            { id: Number(id), value: JSON.parse(value!) as unknown },
          ]),
        ),
        refused: new Map(outcome('refused').map(([, , key, error]) => [key!, error!])),
      };
    };
    const relayed = written.map((e) => [e.aggregateId, { id: ids[0], value: e }] as const);

    // The serde as configured out of the box.
    const defaults = await read('apicurio-serde');
    expect(defaults.ok).toEqual(new Map(relayed));
    expect([...defaults.refused.keys()].sort()).toEqual(
      [plain.aggregateId, broken.aggregateId].sort(),
    );
    // No magic byte: the serde looks for a fallback artifact, and none is configured.
    expect(defaults.refused.get(plain.aggregateId)).toMatch(/artifact reference cannot be null/);
    // Framed with the right id, but the payload breaks the registered schema: the serde validated.
    expect(defaults.refused.get(broken.aggregateId)).toMatch(
      /Error validating data against json schema/,
    );

    // With the version evgen pushed as its fallback artifact, it reads the plain record too (a
    // topic migrating record by record), validated against that version.
    const migrating = await read('apicurio-serde-fallback', [CCOMPAT_GROUP, subject, '1']);
    expect(migrating.ok).toEqual(
      new Map([...relayed, [plain.aggregateId, { id: -1, value: plain }]]),
    );
    expect([...migrating.refused.keys()]).toEqual([broken.aggregateId]);
  }, 180_000);

  it("records the serde's serializer wrote (each sent twice) are applied once each by evgen's consumer; a schema-breaking value is never sent", async () => {
    const marker = uniqueDomain();
    const { subject, ids } = await registerExampleEvent(tests, 'order/OrderCancelled', marker);
    const s = (setup = await inventoryOnKafka(kafkajsClient));
    const envelopes = Array.from({ length: 4 }, () => s.envelope());
    const broken = breaking(s.envelope());
    const input = [...envelopes.flatMap((e) => [e, e]), broken]
      .map((e) => JSON.stringify(e))
      .join('\n');
    const lines = serdeLines(
      await runApicurioSerde(
        [
          'write',
          s.kafka.brokers,
          s.routes.topics[0]!,
          SERDE_REGISTRY_URL,
          CCOMPAT_GROUP,
          subject,
          '1',
        ],
        input,
      ),
    );
    const sent = lines.filter(([outcome]) => outcome === 'sent');
    expect(sent.map(([, key, id]) => [key, Number(id)])).toEqual(
      envelopes.flatMap((e) => [
        [e.aggregateId, ids[0]],
        [e.aggregateId, ids[0]],
      ]),
    );
    expect(lines.filter(([outcome]) => outcome === 'refused')).toEqual([
      ['refused', broken.aggregateId, expect.stringMatching(/Error validating data/)],
    ]);

    runner = createKafkaConsumerRunner({
      handler: s.handler(),
      kafka: {
        client: s.client,
        routes: s.routes,
        schemaIds: schemaIdsFor(marker),
      },
    });
    await runner.start();
    const consumer = runner;
    await waitFor(() => consumer.metrics().handled === 8, 60_000, '8 records handled');
    expect(consumer.metrics()).toMatchObject({ handled: 8, duplicates: 4, deadLettered: 0 });
    expect(await s.effects()).toEqual(new Map(envelopes.map((e) => [e.messageId, 1])));
  }, 120_000);
});
