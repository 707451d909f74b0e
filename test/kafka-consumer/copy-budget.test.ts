/**
 * The Kafka runner fits its copies to the limit of the topic they go to: it reads the topic's
 * `max.message.bytes` (the broker's `message.max.bytes` when the topic sets none) once per topic
 * through the adapter's admin API. On a dead-letter topic created with a small limit, a dead
 * letter whose foreign header makes it too large loses only that header (named in `evgen-cut`
 * with the topic's limit); the small foreign headers stay. With a fixed 1,000,000-byte budget
 * the first send was refused and the fallback dropped every foreign header. Real broker, both
 * adapters.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  listKafkaDeadLetters,
  NonRetryableError,
  type KafkaClient,
  type KafkaConsumerRoutes,
  type KafkaConsumerRunner,
  type KafkaProducer,
} from 'evgen/runtime';
import { KAFKA_CUT_HEADER } from '../../src/runtime/kafka/consumer/dead-letter-record.js';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../support/kafka/test-kafka.js';
import { createTopicsSettled, waitFor } from './support/inventory-on-kafka.js';

const DEAD_LETTER_LIMIT = 40_000;

describe.each(KAFKA_CLIENTS)('Kafka copy budget ($name, real broker)', ({ create }) => {
  let kafka: TestKafka | undefined;
  let client: KafkaClient | undefined;
  let producer: KafkaProducer | undefined;
  let runner: KafkaConsumerRunner | undefined;
  let routes: KafkaConsumerRoutes | undefined;

  afterEach(async () => {
    await runner?.stop();
    await producer?.close().catch(() => undefined);
    await kafka?.admin.deleteGroups([routes?.groupId ?? '']).catch(() => undefined);
    await kafka?.cleanup();
  });

  it('a dead letter larger than its topic’s max.message.bytes is fitted to it, not stripped bare', async () => {
    kafka = await createTestKafka(create);
    client = create({ brokers: [kafka.brokers] });
    const [source, deadLetter, retry] = await createTopicsSettled(kafka, [
      { topic: 'orders', partitions: 1 },
      {
        topic: 'budget.dlt',
        partitions: 1,
        configs: { 'max.message.bytes': String(DEAD_LETTER_LIMIT) },
      },
      { topic: 'budget.retry', partitions: 1 },
    ]);
    routes = {
      consumer: 'budget',
      groupId: `${kafka.prefix}budget`,
      topics: [source!],
      retry: [{ topic: retry!, delayMs: 100 }],
      deadLetter: deadLetter!,
      maxAttempts: 1,
    };
    let handled = 0;
    runner = createKafkaConsumerRunner({
      handler: {
        name: 'budget',
        handle: async () => {
          handled++;
          throw new NonRetryableError('refused by the test');
        },
      },
      kafka: {
        client,
        routes,
      },
    });
    await runner.start();
    producer = await client.producer({ timeoutMs: 15_000 });
    const messageId = randomUUID();
    const body = JSON.stringify({
      messageId,
      eventType: 'order.OrderCancelled',
      schemaVersion: 1,
      aggregateType: 'Order',
      aggregateId: 'o-1',
      occurredAt: '2026-01-01T00:00:00.000Z',
      payload: { orderId: 'o-1' },
    });
    // The source topic takes it (1 MiB default); its dead letter cannot go as it is.
    await producer.send([
      {
        topic: source!,
        key: 'o-1',
        value: body,
        headers: { messageId, blob: 'b'.repeat(DEAD_LETTER_LIMIT), 'x-tenant': 'acme' },
      },
    ]);

    await waitFor(() => runner!.metrics().deadLettered === 1, 60_000, 'one dead letter');
    const letters = await listKafkaDeadLetters({ client, routes });
    expect(letters).toHaveLength(1);
    const [letter] = letters;
    expect(letter!.messageId).toBe(messageId);
    expect(letter!.value?.toString()).toBe(body);
    expect(letter!.headers.blob).toBeUndefined();
    // Only the header that had to go went: the small foreign one stays.
    expect(letter!.headers['x-tenant']).toBe('acme');
    const cut = JSON.parse(String(letter!.headers[KAFKA_CUT_HEADER])) as Record<string, string>;
    expect(cut).toEqual({
      'header blob': expect.stringMatching(/^dropped: the copy must fit \d+ bytes$/),
    });
    const budget = Number(/fit (\d+) bytes/.exec(cut['header blob']!)![1]);
    expect(budget).toBeLessThanOrEqual(DEAD_LETTER_LIMIT);
    expect(budget).toBeGreaterThan(DEAD_LETTER_LIMIT / 2);
    expect(handled).toBe(1);
    expect(runner.metrics().settleFailures).toBe(0);
  }, 120_000);
});
