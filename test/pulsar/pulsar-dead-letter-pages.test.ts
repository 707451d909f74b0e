/**
 * pulsarDeadLetterSource over a backlog larger than one page (real broker; each test its own
 * topics and subscriptions, deleted after): every letter is listed once, in publish order, and
 * none is removed by listing; `limit` reads only the first ones; a replay of letters spread over
 * several pages moves exactly those to the consumer's first retry topic and leaves the others.
 * The first test uses a page of 4 letters (the `pageSize` seam), the second the default page
 * with more letters than it holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  pulsarConsumerTopics,
  pulsarDeadLetterSource,
  pulsarWebSocketClient,
  type PulsarClient,
  type PulsarConsumerRoutes,
} from 'evgen/runtime';
import { createTestPulsar, waitFor, type TestPulsar } from '../support/pulsar/test-pulsar.js';

const CONSUMER = 'inventory-service';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Fixture {
  readonly pulsar: TestPulsar;
  readonly client: PulsarClient;
  readonly routes: PulsarConsumerRoutes;
  /** The messageIds of the letters written, in publish order. */
  readonly ids: string[];
}

/** `count` letters on the consumer's dead-letter topic, kept by its `.dlq` subscription. */
async function fixture(count: number): Promise<Fixture> {
  const pulsar = await createTestPulsar();
  closers.push(() => pulsar.cleanup());
  const topic = pulsar.topic('order.events');
  const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
  const routes = pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [200] });
  pulsar.topic(`${CONSUMER}.retry.200ms`);
  pulsar.topic(`${CONSUMER}.dlt`);
  const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
  // The subscription keeps the letters (what the runner's start creates).
  const keeper = client.consumer({
    topics: [routes.deadLetter],
    subscription: routes.deadLetterSubscription,
    subscriptionType: 'Shared',
  });
  await keeper.start({ onMessage: () => undefined });
  await keeper.close();
  const producer = await client.producer(routes.deadLetter);
  const ids = Array.from({ length: count }, (_, i) => `letter-${String(i).padStart(5, '0')}`);
  // One producer stores its sends in call order.
  await Promise.all(
    ids.map((messageId, i) =>
      producer.send({
        key: `order-${i % 7}`,
        payload: Buffer.from(JSON.stringify({ messageId, eventType: 'order.OrderCancelled' })),
        properties: {
          messageId,
          eventType: 'order.OrderCancelled',
          'evgen-error-type': i % 2 === 0 ? 'NonRetryableError' : 'ValidationError',
          'evgen-attempts': '1',
        },
      }),
    ),
  );
  await producer.close();
  return { pulsar, client, routes, ids };
}

/** Reads the messageIds on `topic` (a fresh subscription from the earliest) until `count` came. */
async function readIds(f: Fixture, topic: string, count: number): Promise<string[]> {
  const reader = f.client.consumer({
    topics: [topic],
    subscription: 'pages-test-reader',
    subscriptionType: 'Shared',
    maxUnsettled: 1_000,
  });
  const seen: string[] = [];
  await reader.start({
    onMessage: (message) => {
      seen.push(message.properties.messageId ?? '?');
      reader.ack(message);
    },
  });
  try {
    await waitFor(`${count} messages on ${topic}`, () => (seen.length >= count ? true : undefined));
  } finally {
    await reader.close();
  }
  return seen;
}

describe('Pulsar dead-letter source pages', () => {
  it('lists every letter of a backlog of several pages once, in order, and removes none; limit reads the first ones; a replay across pages moves exactly the selected', async () => {
    const f = await fixture(25);
    const source = (extra: { limit?: number } = {}) =>
      pulsarDeadLetterSource({
        client: f.client,
        webServiceUrl: f.pulsar.webUrl,
        routes: () => f.routes,
        pageSize: 4,
        ...extra,
      });
    const listed = await source().list(CONSUMER);
    expect(listed.map((letter) => letter.messageId)).toEqual(f.ids);
    expect(listed.filter((letter) => letter.errorType === 'ValidationError')).toHaveLength(12);
    // Listing acknowledged nothing: the same 25 again.
    expect((await source().list(CONSUMER)).map((letter) => letter.messageId)).toEqual(f.ids);
    expect((await source({ limit: 10 }).list(CONSUMER)).map((l) => l.messageId)).toEqual(
      f.ids.slice(0, 10),
    );

    const outcome = await source().replay(
      CONSUMER,
      (letter) => letter.errorType === 'ValidationError',
    );
    const odd = f.ids.filter((_, i) => i % 2 === 1);
    expect(outcome).toEqual({ replayed: odd, kept: 13 });
    expect(await readIds(f, f.routes.retry[0]!.topic, odd.length)).toEqual(odd);
    const left = (await source().list(CONSUMER)).map((letter) => letter.messageId);
    expect(left).toEqual(f.ids.filter((_, i) => i % 2 === 0));
  });

  it('reads a backlog larger than the default page (1 000) whole', async () => {
    const f = await fixture(1_010);
    const source = pulsarDeadLetterSource({
      client: f.client,
      webServiceUrl: f.pulsar.webUrl,
      routes: () => f.routes,
    });
    const listed = await source.list(CONSUMER);
    expect(listed).toHaveLength(1_010);
    expect(listed.map((letter) => letter.messageId)).toEqual(f.ids);
  });

  it('refuses a page size or limit that is not a positive integer', () => {
    const client = pulsarWebSocketClient({ webServiceUrl: 'http://127.0.0.1:1' });
    const routes = () => pulsarConsumerTopics(CONSUMER, ['persistent://public/default/x']);
    expect(() =>
      pulsarDeadLetterSource({ client, webServiceUrl: 'http://127.0.0.1:1', routes, pageSize: 0 }),
    ).toThrow('pageSize must be a positive integer (got 0)');
    expect(() =>
      pulsarDeadLetterSource({ client, webServiceUrl: 'http://127.0.0.1:1', routes, limit: 1.5 }),
    ).toThrow('limit must be a positive integer (got 1.5)');
  });
});
