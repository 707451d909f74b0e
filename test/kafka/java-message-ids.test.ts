/**
 * Which messageIds a foreign producer may use, checked with records written by Apache's own Java
 * producer (test/kafka/java/InteropProducer.java): any UUID in its canonical 36-character text
 * form is accepted — `UUID.randomUUID().toString()`, the same upper-cased, name-based (v3), nil
 * and max — and kept exactly as sent (the inbox row and the handler see Java's spelling);
 * braces, a `urn:uuid:` prefix, 32 digits without hyphens and non-UUID strings are dead-lettered
 * with a reason that says what is expected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  ensureKafkaTopics,
  kafkaConsumerRoutes,
  listKafkaDeadLetters,
  migrateInbox,
  postgresDatabase,
  type KafkaConsumerRunner,
} from 'evgen/runtime';
import { createInventoryServiceConsumer } from '../../generated/consumers/inventory-service.js';
import { kafkaTopology } from '../../generated/kafka/topics.js';
import { runJava } from '../support/kafka/java.js';
import { createTestKafka, KAFKA_CLIENTS, waitFor } from '../support/kafka/test-kafka.js';
import { createTestSchema } from '../support/postgres.js';

const ACCEPTED = ['random', 'upper', 'name-based', 'nil', 'max'] as const;
const REFUSED = ['braces', 'urn', 'compact', 'plain'] as const;

describe.each(KAFKA_CLIENTS)('messageIds from a Java producer: $name', ({ create }) => {
  let runner: KafkaConsumerRunner | undefined;
  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
  });

  it('handles every canonical UUID as sent and dead-letters the other forms with the rule', async () => {
    const kafka = await createTestKafka(create);
    const pg = await createTestSchema('evgen_java_ids');
    try {
      const client = create({ brokers: [kafka.brokers] });
      const db = postgresDatabase(pg.pool);
      await migrateInbox(db, { schema: pg.schema });
      const options = { prefix: kafka.prefix, tiers: [200] };
      const ensured = await ensureKafkaTopics(client, kafkaTopology, options);
      for (const topic of ensured.created) kafka.track('topic', topic);
      const routes = kafkaConsumerRoutes(kafkaTopology, 'inventory-service', options);
      kafka.track('group', routes.groupId);
      const seen: string[] = [];
      runner = createKafkaConsumerRunner({
        handler: createInventoryServiceConsumer({
          db,
          inbox: { schema: pg.schema },
          handlers: {
            'order.OrderCancelled': {
              1: (envelope) => {
                seen.push(envelope.messageId);
                return Promise.resolve();
              },
            },
            'order.OrderCreated': { 2: () => Promise.resolve() },
          },
        }),
        kafka: {
          client,
          routes,
        },
      });
      await runner.start();

      const payload = JSON.stringify({
        orderId: '@AGGREGATE@',
        cancelledAt: '2026-03-01T10:00:00Z',
        reason: 'customer_request',
      });
      const output = await runJava('InteropProducer', [
        kafka.brokers,
        `${kafka.prefix}order.events`,
        'order.OrderCancelled',
        payload,
        ...ACCEPTED,
        ...REFUSED,
      ]);
      const sent = new Map(
        output
          .trimEnd()
          .split('\n')
          .map((line) => line.split('\t') as [string, string, string])
          .map(([form, messageId]) => [form, messageId]),
      );
      expect([...sent.keys()]).toEqual([...ACCEPTED, ...REFUSED]);
      // Java's own spellings: lower case from toString(), upper case only where asked for.
      expect(sent.get('random')).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(sent.get('upper')).toMatch(
        /^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/,
      );
      expect(sent.get('name-based')!.charAt(14)).toBe('3');

      await waitFor(
        'every record handled or dead-lettered',
        () => {
          const m = runner!.metrics();
          return m.handled === ACCEPTED.length && m.deadLettered === REFUSED.length
            ? true
            : undefined;
        },
        60_000,
      );
      expect([...seen].sort()).toEqual(ACCEPTED.map((form) => sent.get(form)!).sort());
      const inbox = await pg.pool.query<{ message_id: string }>(
        `SELECT message_id FROM "${pg.schema}".inbox_message ORDER BY message_id`,
      );
      expect(inbox.rows.map((r) => r.message_id)).toEqual(
        ACCEPTED.map((form) => sent.get(form)!).sort(),
      );

      const letters = await listKafkaDeadLetters({ client, routes });
      expect(letters.map((l) => l.messageId).sort()).toEqual(
        REFUSED.map((form) => sent.get(form)!).sort(),
      );
      for (const letter of letters) {
        expect(letter.diagnostics.errorMessage).toContain(
          '/messageId must be a UUID in canonical text form',
        );
      }
    } finally {
      await runner?.stop();
      runner = undefined;
      await kafka.cleanup();
      await pg.drop();
    }
  }, 180_000);
});
