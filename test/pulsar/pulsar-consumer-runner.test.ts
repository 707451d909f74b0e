/**
 * createPulsarConsumerRunner on the real broker and PostgreSQL, with an inbox consumer whose
 * effect is one row per handled message (each test its own topics, subscriptions and schema):
 * - acknowledged only after the inbox commit: every message once, each aggregate in order, a
 *   duplicate absorbed; a second runner on the Key_Shared subscription shares the work;
 * - a retryable failure is retried through the retry tier (ctx.attempt 1, then 2), retries
 *   exhausted and non-retryable failures end in the dead-letter topic with evgen's diagnostics
 *   (Kafka's property names) and Pulsar's REAL_TOPIC / ORIGIN_MESSAGE_ID;
 * - malformed and oversized messages are dead letters at once, never retried;
 * - unsubscribed and unknown types are skipped, acknowledged, nothing dead-lettered;
 * - the database away: no attempt used, consumption pauses and resumes, handled once after;
 * - the dead-letter source lists the letters without removing them and replays only the selected
 *   one through the inbox (attempt 1 again), the others stay.
 */
import { acceptAnyDescriptor } from '../support/accept-any-descriptor.js';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  createPulsarConsumerRunner,
  migrateInbox,
  NonRetryableError,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarDeadLetterSource,
  pulsarWebSocketClient,
  RetryableError,
  UnavailableError,
  type ConsumerContext,
  type Envelope,
  type PulsarConsumerRoutes,
  type PulsarConsumerRunner,
  type PulsarConsumerRunnerEvent,
  type PulsarInboundMessage,
  type PulsarProducer,
} from 'evgen/runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestPulsar, waitFor, type TestPulsar } from '../support/pulsar/test-pulsar.js';

type Mode = 'ok' | 'retry-once' | 'retry-always' | 'poison' | 'unavailable-once';
interface Payload {
  readonly orderId: string;
  readonly mode: Mode;
  readonly seq: number;
}
const CANCELLED = acceptAnyDescriptor<Payload>('order.OrderCancelled');
const CONSUMER = 'inventory-service';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Fixture {
  pulsar: TestPulsar;
  pg: TestSchema;
  routes: PulsarConsumerRoutes;
  producer: PulsarProducer;
  attempts: Map<string, number[]>;
  /** Orders whose poison is cured (the fix a replay follows). */
  fixed: Set<string>;
  source(): ReturnType<typeof pulsarDeadLetterSource>;
  events: PulsarConsumerRunnerEvent[];
  runner(messageLimits?: { maxBytes: number }): PulsarConsumerRunner;
  effects(): Promise<{ message_id: string; order_id: string; seq: number }[]>;
  deadLetters(): Promise<PulsarInboundMessage[]>;
}

async function fixture(): Promise<Fixture> {
  const pulsar = await createTestPulsar();
  closers.push(() => pulsar.cleanup());
  const pg = await createTestSchema('evgen_pulsar_consumer');
  closers.push(() => pg.drop());
  const db = postgresDatabase(pg.pool);
  await migrateInbox(db, { schema: pg.schema });
  await pg.pool.query(
    `CREATE TABLE "${pg.schema}".effects (n serial PRIMARY KEY, message_id text NOT NULL, order_id text NOT NULL, seq int NOT NULL)`,
  );
  const topic = pulsar.topic('order.events');
  const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
  const routes = pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [200] });
  // The consumer's own topics are this test's too: deleted at clean-up.
  pulsar.topic(`${CONSUMER}.retry.200ms`);
  pulsar.topic(`${CONSUMER}.dlt`);
  const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
  const producer = await client.producer(topic);
  closers.push(() => producer.close());
  const attempts = new Map<string, number[]>();
  const unavailableOnce = new Set<string>();
  const fixed = new Set<string>();
  const consumer = createInboxConsumer(
    { name: CONSUMER, descriptors: [CANCELLED] },
    {
      db,
      inbox: { schema: pg.schema },
      handlers: {
        'order.OrderCancelled': {
          1: async (envelope: Envelope<string, 1, Payload>, ctx: ConsumerContext) => {
            const { mode, orderId, seq } = envelope.payload;
            attempts.set(envelope.messageId, [
              ...(attempts.get(envelope.messageId) ?? []),
              ctx.attempt,
            ]);
            if (mode === 'retry-once' && ctx.attempt === 1) throw new RetryableError('busy');
            if (mode === 'retry-always') throw new RetryableError('busy, again');
            if (mode === 'poison' && !fixed.has(orderId))
              throw new NonRetryableError('illegal state');
            if (mode === 'unavailable-once' && !unavailableOnce.has(envelope.messageId)) {
              unavailableOnce.add(envelope.messageId);
              throw new UnavailableError('database down');
            }
            await ctx.tx.query(
              `INSERT INTO "${pg.schema}".effects (message_id, order_id, seq) VALUES ($1, $2, $3)`,
              [envelope.messageId, orderId, seq],
            );
          },
        },
      },
    },
  );
  const events: PulsarConsumerRunnerEvent[] = [];
  return {
    pulsar,
    pg,
    routes,
    producer,
    attempts,
    fixed,
    source: () =>
      pulsarDeadLetterSource({ client, webServiceUrl: pulsar.webUrl, routes: () => routes }),
    events,
    runner(messageLimits) {
      const runner = createPulsarConsumerRunner({
        ...(messageLimits !== undefined ? { messageLimits } : {}),
        client,
        routes,
        handler: consumer,
        maxAttempts: 3,
        circuitBreaker: { backoff: { baseMs: 300, capMs: 300, jitter: 0 } },
        onEvent: (event) => events.push(event),
      });
      closers.push(() => runner.stop());
      return runner;
    },
    async effects() {
      const { rows } = await pg.pool.query<{ message_id: string; order_id: string; seq: number }>(
        `SELECT message_id, order_id, seq FROM "${pg.schema}".effects ORDER BY n`,
      );
      return rows;
    },
    async deadLetters() {
      // Read on the dead-letter subscription without acknowledging: the letters stay.
      const reader = client.consumer({
        topics: [routes.deadLetter],
        subscription: routes.deadLetterSubscription,
        subscriptionType: 'Shared',
      });
      const letters: PulsarInboundMessage[] = [];
      await reader.start({ onMessage: (message) => letters.push(message) });
      const stats = (await pulsar.admin(
        'GET',
        `${routes.deadLetter.replace('://', '/')}/stats`,
      )) as { subscriptions: Record<string, { msgBacklog: number }> };
      const { msgBacklog } = stats.subscriptions[routes.deadLetterSubscription]!;
      await waitFor('letters', () => (letters.length >= msgBacklog ? true : undefined));
      await reader.close();
      return letters;
    },
  };
}

const envelope = (mode: Mode = 'ok', orderId = randomUUID(), seq = 0) =>
  createEnvelope(CANCELLED, { orderId, mode, seq });
const publish = (f: Fixture, e: Envelope, properties: Record<string, string> = {}) =>
  f.producer.send({
    key: e.aggregateId,
    payload: Buffer.from(JSON.stringify(e)),
    properties: { messageId: e.messageId, eventType: e.eventType, ...properties },
  });

describe('Pulsar consumer runner', () => {
  it('acks after the inbox commit: each message once, each aggregate in order, a duplicate absorbed, two runners share the subscription', async () => {
    const f = await fixture();
    const first = f.runner();
    const second = f.runner();
    await Promise.all([first.start(), second.start()]);
    const orders = Array.from({ length: 8 }, () => randomUUID());
    const sent: Envelope[] = [];
    for (let seq = 1; seq <= 10; seq++)
      for (const orderId of orders) sent.push(envelope('ok', orderId, seq));
    for (const e of sent) await publish(f, e);
    await publish(f, sent[0]!);
    await waitFor('counted', () =>
      first.metrics().handled + second.metrics().handled === sent.length + 1 ? true : undefined,
    );
    const rows = await f.effects();
    expect(rows).toHaveLength(sent.length);
    expect(new Set(rows.map((row) => row.message_id)).size).toBe(sent.length);
    for (const orderId of orders)
      expect(rows.filter((row) => row.order_id === orderId).map((row) => row.seq)).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
    expect(first.metrics().duplicates + second.metrics().duplicates).toBe(1);
    // Key_Shared split the aggregates between the two runners.
    expect(first.metrics().handled).toBeGreaterThan(0);
    expect(second.metrics().handled).toBeGreaterThan(0);
    expect((await first.health()).ready).toBe(true);
  }, 120_000);

  it('retries through the retry tier; retries exhausted and non-retryable failures are dead letters with their diagnostics', async () => {
    const f = await fixture();
    const runner = f.runner();
    await runner.start();
    const once = envelope('retry-once');
    const always = envelope('retry-always');
    const poison = envelope('poison');
    await publish(f, once);
    await publish(f, always);
    await publish(f, poison);
    await waitFor('handled on retry', () => (runner.metrics().handled === 1 ? true : undefined));
    await waitFor('dead letters', () => (runner.metrics().deadLettered === 2 ? true : undefined));
    expect(f.attempts.get(once.messageId)).toEqual([1, 2]);
    expect(f.attempts.get(always.messageId)).toEqual([1, 2, 3]);
    expect(f.attempts.get(poison.messageId)).toEqual([1]);
    expect(runner.metrics()).toMatchObject({ retried: 3, deadLettered: 2, handled: 1 });
    const letters = await f.deadLetters();
    const byId = new Map(letters.map((letter) => [letter.properties.messageId, letter]));
    expect(byId.get(always.messageId)!.properties).toMatchObject({
      'evgen-error-type': 'RetryableError',
      'evgen-error-message': expect.stringContaining('busy, again'),
      'evgen-attempts': '3',
      'evgen-consumer': CONSUMER,
      'evgen-original-topic': f.routes.topics[0],
      REAL_TOPIC: f.routes.topics[0],
    });
    expect(byId.get(always.messageId)!.key).toBe(always.aggregateId);
    expect(JSON.parse(byId.get(always.messageId)!.payload.toString())).toEqual(always);
    expect(byId.get(poison.messageId)!.properties).toMatchObject({
      'evgen-error-type': 'NonRetryableError',
      'evgen-attempts': '1',
    });
    expect(await f.effects()).toHaveLength(1);
  }, 120_000);

  it('malformed, oversized and forged-attempt messages: dead letters at once or a first attempt, never a loop', async () => {
    const f = await fixture();
    // Bodies over 100 kB are refused before they are parsed.
    const runner = f.runner({ maxBytes: 100_000 });
    await runner.start();
    const malformedId = randomUUID();
    await f.producer.send({
      key: 'k',
      payload: Buffer.from('{"not": "an envelope"'),
      properties: { messageId: malformedId },
    });
    const big = envelope();
    const oversized = { ...big, payload: { ...big.payload, blob: 'x'.repeat(700_000) } };
    await publish(f, oversized);
    // A producer's evgen-attempt on an event topic is not believed: attempt 1.
    const forged = envelope('poison');
    await publish(f, forged, { 'evgen-attempt': '99', 'evgen-error-type': 'Forged' });
    await waitFor('dead letters', () => (runner.metrics().deadLettered === 3 ? true : undefined));
    const letters = await f.deadLetters();
    const byId = new Map(letters.map((letter) => [letter.properties.messageId, letter]));
    expect(byId.get(malformedId)!.properties['evgen-error-type']).toBe('MalformedMessageError');
    expect(byId.get(big.messageId)!.properties['evgen-error-type']).toBe('MalformedMessageError');
    expect(byId.get(forged.messageId)!.properties).toMatchObject({
      'evgen-error-type': 'NonRetryableError',
      'evgen-attempts': '1',
    });
    expect(f.attempts.get(forged.messageId)).toEqual([1]);
    expect(runner.metrics()).toMatchObject({ retried: 0, handled: 0, brokerDeadLettered: 0 });
  }, 120_000);

  it('unsubscribed and unknown types are skipped and acknowledged; the database away pauses without using an attempt', async () => {
    const f = await fixture();
    const runner = f.runner();
    await runner.start();
    const shipped = { ...envelope(), eventType: 'order.OrderShipped' };
    const unknown = { ...envelope(), eventType: 'order.OrderRefunded' };
    await publish(f, shipped);
    await publish(f, unknown, { eventType: '' });
    await waitFor('skipped', () => (runner.metrics().skipped === 2 ? true : undefined));
    const outage = envelope('unavailable-once');
    await publish(f, outage);
    await waitFor('handled after the pause', () =>
      runner.metrics().handled === 1 ? true : undefined,
    );
    expect(f.attempts.get(outage.messageId)).toEqual([1, 1]);
    expect(f.events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['paused', 'resumed']),
    );
    expect(runner.metrics()).toMatchObject({ deadLettered: 0, retried: 0, pauses: 1 });
    expect(await f.deadLetters()).toEqual([]);
    await runner.stop();
    expect(runner.state).toBe('stopped');
  }, 120_000);

  it('the dead-letter source lists without removing and replays only the selected letter, through the inbox', async () => {
    const f = await fixture();
    const runner = f.runner();
    await runner.start();
    const cured = envelope('poison');
    const still = envelope('poison');
    await publish(f, cured);
    await publish(f, still);
    await waitFor('dead letters', () => (runner.metrics().deadLettered === 2 ? true : undefined));
    const source = f.source();
    const listed = await source.list(CONSUMER);
    expect(listed.map((record) => record.messageId).sort()).toEqual(
      [cured.messageId, still.messageId].sort(),
    );
    expect(listed[0]).toMatchObject({
      transport: 'pulsar',
      consumer: CONSUMER,
      errorType: 'NonRetryableError',
      attempts: 1,
      origin: expect.stringContaining(f.routes.topics[0]!),
    });
    // Listing removed nothing.
    expect(await source.list(CONSUMER)).toHaveLength(2);
    f.fixed.add(cured.payload.orderId);
    const outcome = await source.replay(CONSUMER, (record) => record.messageId === cured.messageId);
    expect(outcome).toEqual({ replayed: [cured.messageId], kept: 1 });
    await waitFor('replay handled', () => (runner.metrics().handled === 1 ? true : undefined));
    expect(f.attempts.get(cured.messageId)).toEqual([1, 1]);
    expect((await f.effects()).map((row) => row.message_id)).toEqual([cured.messageId]);
    expect((await source.list(CONSUMER)).map((record) => record.messageId)).toEqual([
      still.messageId,
    ]);
    expect(source.missing()).toEqual([]);
  }, 120_000);
});
