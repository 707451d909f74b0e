/**
 * The Kafka consumer runner with the generated inventory-service consumer (committed
 * `generated/`), against the real broker and the real PostgreSQL, for every client adapter.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  listKafkaDeadLetters,
  replayKafkaDeadLetters,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
  type KafkaConsumerRunnerOptions,
} from 'evgen/runtime';
import {
  ensureKafkaTopics,
  kafkaConsumerRoutes,
  migrateInbox,
  postgresDatabase,
} from 'evgen/runtime';
import { createInventoryServiceConsumer } from '../../generated/consumers/inventory-service.js';
import { kafkaTopology } from '../../generated/kafka/topics.js';
import { publishOrderCancelledV1 } from '../../generated/kafka/producers.js';
import { orderCancelledV1 } from '../../generated/order/order-cancelled/envelope.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
  type InventoryOnKafkaOptions,
} from './support/inventory-on-kafka.js';

describe.each(KAFKA_CLIENTS)('Kafka consumer runner ($name, real broker)', ({ create }) => {
  let setup: InventoryOnKafka | undefined;
  let runners: KafkaConsumerRunner[] = [];
  let events: KafkaConsumerRunnerEvent[] = [];

  afterEach(async () => {
    for (const runner of runners) await runner.stop();
    runners = [];
    events = [];
    await setup?.cleanup();
    setup = undefined;
  });

  async function given(options: InventoryOnKafkaOptions = {}): Promise<InventoryOnKafka> {
    setup = await inventoryOnKafka(create, options);
    return setup;
  }

  async function run(
    s: InventoryOnKafka,
    extra: Partial<KafkaConsumerRunnerOptions> = {},
  ): Promise<KafkaConsumerRunner> {
    const runner = createKafkaConsumerRunner({
      handler: s.handler(),
      onEvent: (event) => events.push(event),
      ...extra,
      kafka: {
        client: s.client,
        routes: s.routes,
        strictBackoff: { baseMs: 100, capMs: 200, jitter: 0 },
      },
    });
    runners.push(runner);
    await runner.start();
    return runner;
  }

  async function committedTotal(s: InventoryOnKafka, topic: string): Promise<number> {
    const committed = await s.kafka.admin.committedOffsets(s.routes.groupId, topic);
    return [...committed.values()].reduce((sum, offset) => sum + Number(offset), 0);
  }

  it('runs the generated consumer: every record handled once, per-key order kept, duplicates absorbed, offsets committed', async () => {
    const s = await given();
    const runner = await run(s);
    const orders = Array.from({ length: 6 }, () => randomUUID());
    const sent = [];
    for (let round = 0; round < 4; round++) {
      for (const orderId of orders) sent.push(await s.publish(orderId, `round ${round}`));
    }
    // The same message again (a relay that crashed after the broker ack publishes twice).
    await s.producer.send([
      {
        topic: s.routes.topics[0]!,
        key: sent[0]!.aggregateId,
        value: JSON.stringify(sent[0]),
        headers: { messageId: sent[0]!.messageId, eventType: sent[0]!.eventType },
      },
    ]);
    await waitFor(() => runner.metrics().handled === 25, 60_000, '25 records handled');
    const effects = await s.effects();
    expect(effects.size).toBe(24);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    expect(runner.metrics()).toMatchObject({
      handled: 25,
      duplicates: 1,
      retried: 0,
      deadLettered: 0,
    });
    // Records of one key (one partition) were applied in the order they were produced.
    const order = await s.effectOrder();
    for (const orderId of orders) {
      expect(order.filter((e) => e.orderId === orderId).map((e) => e.note)).toEqual([
        'round 0',
        'round 1',
        'round 2',
        'round 3',
      ]);
    }
    await runner.flushCommits();
    expect(await committedTotal(s, s.routes.topics[0]!)).toBe(25);
    const lag = await runner.lag();
    expect(lag.filter((p) => p.topic === s.routes.topics[0]).map((p) => p.lag)).toEqual([0, 0, 0]);
    expect(lag.every((p) => p.assigned)).toBe(true);
  });

  it('wires up from generated code alone: topics from kafkaTopology, routes, producer helper, consumer', async () => {
    const kafka = await createTestKafka(create);
    const pg = await createTestSchema('evgen_kafka_generated');
    const client = create({ brokers: [kafka.brokers] });
    const producer = await client.producer();
    try {
      const db = postgresDatabase(pg.pool);
      await migrateInbox(db, { schema: pg.schema });
      await pg.pool.query(`CREATE TABLE "${pg.schema}".released (order_id text PRIMARY KEY)`);
      const options = { prefix: kafka.prefix, tiers: [300] };
      const ensured = await ensureKafkaTopics(kafka.admin, kafkaTopology, options);
      for (const topic of ensured.created) kafka.track('topic', topic);
      const routes = kafkaConsumerRoutes(kafkaTopology, 'inventory-service', options);
      kafka.track('group', routes.groupId);
      expect(routes.strictEventTypes).toEqual(['order.OrderCancelled']);
      const runner = createKafkaConsumerRunner({
        handler: createInventoryServiceConsumer({
          db,
          inbox: { schema: pg.schema },
          handlers: {
            'order.OrderCancelled': {
              1: async (envelope, ctx) => {
                await ctx.tx.query(`INSERT INTO "${pg.schema}".released VALUES ($1)`, [
                  envelope.payload.orderId,
                ]);
              },
            },
            'order.OrderCreated': { 2: async () => undefined },
          },
        }),
        kafka: {
          client,
          routes,
        },
      });
      runners.push(runner);
      await runner.start();
      const orderIds = Array.from({ length: 5 }, () => randomUUID());
      for (const orderId of orderIds) {
        const envelope = orderCancelledV1({
          orderId,
          cancelledAt: new Date().toISOString(),
          reason: 'out_of_stock',
        });
        await publishOrderCancelledV1(producer, envelope, { prefix: kafka.prefix });
      }
      await waitFor(() => runner.metrics().handled === 5, 60_000, 'five handled');
      const { rows } = await pg.pool.query<{ order_id: string }>(
        `SELECT order_id FROM "${pg.schema}".released ORDER BY order_id`,
      );
      expect(rows.map((r) => r.order_id)).toEqual([...orderIds].sort());
    } finally {
      for (const runner of runners) await runner.stop();
      runners = [];
      await producer.close();
      await kafka.cleanup();
      await pg.drop();
    }
  });

  it('retries through the retry topics and dead-letters a poison record while the others flow', async () => {
    const s = await given();
    const runner = await run(s);
    const flaky = await s.publish(undefined, 'flaky');
    s.failures.set(flaky.messageId, { kind: 'retryable', times: 2 });
    // Registered before the handler sees them: failures are looked up by messageId at call time.
    const poisonId = randomUUID();
    s.failures.set(poisonId, { kind: 'non-retryable', times: 99 });
    const poison = await s.publish(poisonId, 'poison'); // orderId, not messageId: see below
    s.failures.set(poison.messageId, { kind: 'non-retryable', times: 99 });
    const others = [];
    for (let i = 0; i < 10; i++) others.push(await s.publish());
    await waitFor(
      () => runner.metrics().handled === 11 && runner.metrics().deadLettered === 1,
      60_000,
      'flaky handled after two retries, poison dead-lettered, others handled',
    );
    const effects = await s.effects();
    expect(effects.get(flaky.messageId)).toBe(1);
    expect(effects.has(poison.messageId)).toBe(false);
    for (const other of others) expect(effects.get(other.messageId)).toBe(1);
    expect(runner.metrics()).toMatchObject({ retried: 2, deadLettered: 1, duplicates: 0 });
    const handledFlaky = events.find(
      (e) => e.type === 'handled' && e.messageId === flaky.messageId,
    ) as Extract<KafkaConsumerRunnerEvent, { type: 'handled' }>;
    expect(handledFlaky.attempt).toBe(3);
    expect(handledFlaky.topic).toBe(s.routes.retry[1]!.topic);

    const letters = await listKafkaDeadLetters({ client: s.client, routes: s.routes });
    expect(letters).toHaveLength(1);
    const [letter] = letters;
    expect(letter!.messageId).toBe(poison.messageId);
    expect(letter!.key).toBe(poison.aggregateId);
    expect(JSON.parse(letter!.value!.toString())).toEqual(JSON.parse(JSON.stringify(poison)));
    expect(letter!.headers.eventType).toBe('order.OrderCancelled');
    expect(letter!.diagnostics).toMatchObject({
      consumer: 'inventory-service',
      errorType: 'NonRetryableError',
      attempts: 1,
      originalTopic: s.routes.topics[0],
    });
    expect(letter!.diagnostics.errorMessage).toContain('reservation in an illegal state');
    expect(letter!.headers['kafka_dlt-original-topic']).toBe(s.routes.topics[0]);
    expect(letter!.headers['kafka_dlt-exception-fqcn']).toBe('InboxHandlerError');
    expect(letter!.headers['kafka_dlt-exception-cause-fqcn']).toBe('NonRetryableError');

    // The cause is fixed: replay. Twice — the inbox makes it one effect.
    s.failures.delete(poison.messageId);
    const first = await replayKafkaDeadLetters({ client: s.client, routes: s.routes });
    expect(first).toEqual({
      replayed: [poison.messageId],
      kept: 0,
      topic: s.routes.retry[0]!.topic,
    });
    await waitFor(() => runner.metrics().handled === 12, 30_000, 'replayed letter handled');
    const second = await replayKafkaDeadLetters({
      client: s.client,
      routes: s.routes,
      filter: (l) => l.messageId === poison.messageId,
    });
    expect(second.replayed).toEqual([poison.messageId]);
    await waitFor(() => runner.metrics().handled === 13, 30_000, 'second replay absorbed');
    expect(runner.metrics().duplicates).toBe(1);
    expect((await s.effects()).get(poison.messageId)).toBe(1);
    const replayedEvent = events.filter(
      (e) => e.type === 'handled' && e.messageId === poison.messageId,
    );
    expect(replayedEvent.map((e) => (e as { result: unknown }).result)).toEqual([
      'handled',
      'duplicate',
    ]);
    // The letter stays in the log; the replayed copies carried a replay count.
    expect(await listKafkaDeadLetters({ client: s.client, routes: s.routes })).toHaveLength(1);
  });

  it('dead-letters records that are not evgen envelopes, straight away', async () => {
    const s = await given();
    const runner = await run(s);
    await s.publishRaw('k1', '{"not": "an envelope"}');
    await s.publishRaw('k2', 'not json at all');
    const good = await s.publish();
    await waitFor(() => runner.metrics().deadLettered === 2 && runner.metrics().handled === 1);
    const letters = await listKafkaDeadLetters({ client: s.client, routes: s.routes });
    expect(letters.map((l) => l.diagnostics.errorType).sort()).toEqual([
      'MalformedMessageError',
      'MalformedMessageError',
    ]);
    expect((await s.effects()).get(good.messageId)).toBe(1);
    expect(runner.metrics().retried).toBe(0);
  });

  it('strict ordering: a failed record blocks its partition (retry in place) and nothing behind it overtakes', async () => {
    const s = await given({ strict: true, partitions: 2 });
    const runner = await run(s);
    const orderId = randomUUID();
    const first = await s.publish(orderId, 'first');
    s.failures.set(first.messageId, { kind: 'retryable', times: 2 });
    await s.publish(orderId, 'second');
    await s.publish(orderId, 'third');
    await waitFor(() => runner.metrics().handled === 3, 30_000, 'three handled');
    expect((await s.effectOrder()).map((e) => e.note)).toEqual(['first', 'second', 'third']);
    expect(runner.metrics()).toMatchObject({ retried: 2, retriedInPlace: 2, deadLettered: 0 });
    for (const tier of s.routes.retry) {
      const offsets = await s.kafka.admin.topicOffsets(tier.topic);
      expect(offsets.every((p) => p.end === '0')).toBe(true); // no retry copies
    }
    // A strict record that keeps failing ends in the dead-letter topic after maxAttempts.
    const stuck = await s.publish(orderId, 'stuck');
    s.failures.set(stuck.messageId, { kind: 'retryable', times: 99 });
    const after = await s.publish(orderId, 'after');
    await waitFor(() => runner.metrics().deadLettered === 1 && runner.metrics().handled === 4);
    expect((await s.effectOrder()).map((e) => e.note)).toEqual([
      'first',
      'second',
      'third',
      'after',
    ]);
    const [letter] = await listKafkaDeadLetters({ client: s.client, routes: s.routes });
    expect(letter!.messageId).toBe(stuck.messageId);
    expect(letter!.diagnostics.attempts).toBe(3);
    expect((await s.effects()).get(after.messageId)).toBe(1);
  });

  it('rebalance: a second member takes partitions over mid-stream; every record has exactly one effect', async () => {
    const s = await given({ partitions: 4, handlerDelayMs: 20 });
    const first = await run(s);
    const sent = [];
    for (let i = 0; i < 40; i++) sent.push(await s.publish());
    await waitFor(() => first.metrics().handled >= 5, 30_000, 'first member busy');
    const second = await run(s);
    for (let i = 0; i < 40; i++) sent.push(await s.publish());
    await waitFor(async () => (await s.effects()).size === 80, 90_000, 'all 80 records applied');
    await waitFor(() => second.assignment().length > 0, 30_000, 'second member assigned');
    const effects = await s.effects();
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    for (const e of sent) expect(effects.get(e.messageId)).toBe(1);
    expect(second.metrics().handled).toBeGreaterThan(0);
    expect(events.some((e) => e.type === 'revoked')).toBe(true);
  });

  it('graceful stop: records in flight finish and are committed; a new member continues without loss or double effect', async () => {
    const s = await given({ handlerDelayMs: 50 });
    const first = await run(s);
    const sent = [];
    for (let i = 0; i < 30; i++) sent.push(await s.publish());
    await waitFor(() => first.metrics().handled >= 3, 30_000, 'some handled');
    await first.stop();
    const handledByFirst = first.metrics().handled;
    const committed = await committedTotal(s, s.routes.topics[0]!);
    expect(committed).toBe(handledByFirst); // everything handled was committed at stop
    expect(first.inFlight).toBe(0);
    const second = await run(s);
    await waitFor(async () => (await s.effects()).size === 30, 60_000, 'all applied');
    const effects = await s.effects();
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    expect(second.metrics().handled).toBe(30 - handledByFirst);
    expect(second.metrics().duplicates).toBe(0);
  });
});
