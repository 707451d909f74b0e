/**
 * A relay route naming a topic the broker does not have, on a broker that does not create topics
 * itself (the test broker runs with `auto.create.topics.enable=false`, as production brokers
 * do): a new event type deployed before its topic. Per client adapter, against the real broker
 * and PostgreSQL (the scenario: test/outbox/support/missing-destination.ts): the other event
 * type's rows are published at once, not held up behind the missing topic (before, nothing at
 * all was published while the topic was missing); the missing topic's rows fail on their own
 * with KafkaTopicMissingError, are retried with backoff and kept, and go out once the topic
 * exists. The broker is never treated as down for it.
 */
import { afterEach, describe, it } from 'vitest';
import {
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  type OutboxRelay,
} from 'evgen-runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../support/kafka/test-kafka.js';
import { runMissingDestinationScenario } from '../outbox/support/missing-destination.js';

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
    const testKafka = (kafka = await createTestKafka(create));
    pg = await createTestSchema('evgen_missing_topic');
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db);
    await testKafka.createTopics([{ topic: 'orders', partitions: 1 }]);
    const producer = await create({ brokers: [testKafka.brokers] }).producer();
    closers.push(() => producer.close());
    await runMissingDestinationScenario({
      db,
      publisher: kafkaRelayPublisher(
        producer,
        { 'test.OrderPlaced': { topic: 'orders' }, 'test.OrderAudited': { topic: 'audit' } },
        { prefix: testKafka.prefix },
      ),
      present: 'test.OrderPlaced',
      missing: 'test.OrderAudited',
      missingError: /KafkaTopicMissingError: topic '.*audit' does not exist/,
      create: async () => {
        await testKafka.createTopics([{ topic: 'audit', partitions: 1 }]);
      },
      started: (started) => (relay = started),
    });
  });
});
