/**
 * A relay route naming a topic the broker does not have, on a broker that does not create topics
 * itself (the test broker runs with `auto.create.topics.enable=false`, as production brokers
 * do): a new event type deployed before its topic. Per client adapter, against the real broker
 * and PostgreSQL: the other event type's rows are published at once, not held up behind the
 * missing topic (before, nothing at all was published while the topic was missing); the missing
 * topic's rows fail on their own with KafkaTopicMissingError, are retried with backoff and kept,
 * and go out once the topic exists. The broker is never treated as down for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  writeOutboxEvent,
  type EventVersionDescriptor,
  type OutboxRelay,
} from 'evgen-runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from '../outbox/support/test-event.js';

/** A second event type, routed to the topic that is missing. */
const orderAudited = {
  ...orderPlacedV1,
  eventType: 'test.OrderAudited',
} as unknown as EventVersionDescriptor<'test.OrderAudited', 1, OrderPlacedV1Payload>;

describe.each(KAFKA_CLIENTS)('relay to a topic the broker does not have: $name', ({ create }) => {
  let kafka: TestKafka | undefined;
  let pg: TestSchema | undefined;
  let relay: OutboxRelay | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await relay?.stop();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await kafka?.cleanup();
    await pg?.drop();
    relay = kafka = pg = undefined;
  });

  it("fails only that topic's rows, publishes the rest at once, and the held rows once it exists", async () => {
    kafka = await createTestKafka(create);
    pg = await createTestSchema('evgen_missing_topic');
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db);
    await kafka.createTopics([{ topic: 'orders', partitions: 1 }]);
    const producer = await create({ brokers: [kafka.brokers] }).producer();
    closers.push(() => producer.close());
    const failures: { eventType: string; error: unknown; unavailable: boolean }[] = [];
    relay = createOutboxRelay({
      db,
      pollIntervalMs: 50,
      backoff: { baseMs: 200, capMs: 400, jitter: 0 },
      // Short backoff for the test; enough attempts that none goes DEAD before the topic exists.
      maxAttempts: 1_000,
      publisher: kafkaRelayPublisher(
        producer,
        {
          'test.OrderPlaced': { topic: 'orders' },
          'test.OrderAudited': { topic: 'audit' },
        },
        { prefix: kafka.prefix },
      ),
      hooks: {
        onFailed: (message, failure) =>
          failures.push({
            eventType: message.envelope.eventType,
            error: failure.error,
            unavailable: failure.unavailable === true,
          }),
      },
    });
    // The missing topic's rows first, in the same transaction: they are claimed together.
    await db.transaction(async (tx) => {
      for (let i = 0; i < 5; i++)
        await writeOutboxEvent(tx, orderAudited, { orderId: `audit-${i}`, amount: i });
      for (let i = 0; i < 5; i++)
        await writeOutboxEvent(tx, orderPlacedV1, { orderId: `order-${i}`, amount: i });
    });
    const statuses = async () =>
      (
        await db.query<{ event_type: string; status: string; last_error: string | null }>(
          'SELECT event_type, status, last_error FROM outbox_event ORDER BY id',
        )
      ).rows;
    await relay.start();

    // Well within one publish timeout (3 s by default), which every send used to wait out.
    const sent = async (eventType: string) =>
      (await statuses()).filter((r) => r.event_type === eventType && r.status === 'SENT').length;
    await waitFor(
      'the existing topic to get its five rows',
      async () => ((await sent('test.OrderPlaced')) === 5 ? true : undefined),
      2_500,
    );
    await waitFor(
      'the missing topic to fail its rows',
      () => (failures.length >= 5 ? true : undefined),
      5_000,
    );
    const held = (await statuses()).filter((r) => r.event_type === 'test.OrderAudited');
    expect(held.map((r) => r.status)).not.toContain('SENT');
    expect(held.map((r) => r.status)).not.toContain('DEAD');
    expect(held[0]!.last_error).toMatch(/KafkaTopicMissingError: topic '.*audit' does not exist/);
    expect(failures.every((f) => f.eventType === 'test.OrderAudited')).toBe(true);
    expect(failures.some((f) => f.unavailable)).toBe(false);

    // The topic is created; the held rows follow after their backoff and the recheck.
    await kafka.createTopics([{ topic: 'audit', partitions: 1 }]);
    await waitFor(
      'every row SENT after the topic was created',
      async () => ((await statuses()).every((r) => r.status === 'SENT') ? true : undefined),
      20_000,
    );
  });
});
