/**
 * `evgen dlq` and `evgen trace` over Pulsar (real broker, the inbox on the real PostgreSQL): a
 * message the consumer refuses lands in its dead-letter topic; the CLI lists it with its
 * diagnostics, shows it, traces it and replays it to the consumer's own retry topic and through
 * its inbox once, never where the letter's properties point. Each test has its own namespace
 * (`public/evgen-t-<random>`), catalog folder, topics and schema, all removed afterwards.
 */
import { acceptAnyDescriptor } from '../support/accept-any-descriptor.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  createPulsarConsumerRunner,
  migrateInbox,
  migrateOutbox,
  NonRetryableError,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarWebSocketClient,
  type ConsumerContext,
  type Envelope,
  type PulsarClient,
  type PulsarConsumerRoutes,
  type PulsarConsumerRunner,
} from 'evgen/runtime';
import { EXIT_BAD_INPUT, EXIT_OK } from '../../src/cli/exit-codes.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { createTestPulsar, waitFor, type TestPulsar } from '../support/pulsar/test-pulsar.js';

interface Payload {
  readonly orderId: string;
}
const CANCELLED = acceptAnyDescriptor<Payload>('order.OrderCancelled');
const CONSUMER = 'inventory-service';
const PREFIX = 'ops.';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Setup {
  readonly pulsar: TestPulsar;
  readonly pg: TestSchema;
  readonly events: string;
  readonly namespace: string;
  readonly routes: PulsarConsumerRoutes;
  readonly client: PulsarClient;
  /** Orders whose handling fails with a NonRetryableError (a dead letter at once). */
  readonly poisoned: Set<string>;
  runner(): PulsarConsumerRunner;
  publish(envelope?: Envelope<string, 1, Payload>): Promise<Envelope>;
  effects(messageId: string): Promise<number>;
  evgen(...args: string[]): ReturnType<typeof runCliCaptured>;
}

/** A catalog of one event on Pulsar (in `namespace`) with two consumers of it. */
function writeCatalog(namespace: string): string {
  const events = mkdtempSync(join(tmpdir(), 'evgen-pulsar-ops-'));
  closers.push(async () => rmSync(events, { recursive: true, force: true }));
  const event = join(events, 'order', 'OrderCancelled');
  mkdirSync(event, { recursive: true });
  writeFileSync(
    join(event, 'event.json'),
    `${JSON.stringify({
      description: 'An order was cancelled.',
      aggregate: 'Order',
      aggregateId: 'orderId',
      pulsar: { tenant: 'public', namespace, topic: 'order.events' },
    })}\n`,
  );
  writeFileSync(
    join(event, 'v1.schema.json'),
    `${JSON.stringify({
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'OrderCancelled',
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    })}\n`,
  );
  mkdirSync(join(events, '_consumers'));
  for (const consumer of [CONSUMER, 'shipping-service'])
    writeFileSync(
      join(events, '_consumers', `${consumer}.json`),
      `${JSON.stringify({ description: 'Reacts to cancellations.', subscribes: ['order.OrderCancelled'] })}\n`,
    );
  return events;
}

async function setup(): Promise<Setup> {
  const pulsar = await createTestPulsar();
  const namespace = `evgen-t-${randomBytes(4).toString('hex')}`;
  await pulsar.admin('PUT', `namespaces/public/${namespace}`);
  const topics = new Set<string>();
  closers.push(async () => {
    // Topics first (force: subscriptions and connected readers go too), then the namespace.
    const listed = (await pulsar.admin('GET', `namespaces/public/${namespace}/topics`)) as string[];
    for (const topic of new Set([...listed, ...topics]))
      await pulsar
        .admin('DELETE', `${topic.replace('://', '/')}?force=true`)
        .catch((error: unknown) => {
          if (!String(error).includes('HTTP 404')) throw error;
        });
    await pulsar.admin('DELETE', `namespaces/public/${namespace}`);
  });
  const pg = await createTestSchema('evgen_pulsar_ops');
  closers.push(() => pg.drop());
  const db = postgresDatabase(pg.pool);
  await migrateInbox(db, { schema: pg.schema });
  await migrateOutbox(db, { schema: pg.schema });
  await pg.pool.query(`CREATE TABLE "${pg.schema}".effects (message_id text NOT NULL)`);
  const events = writeCatalog(namespace);
  const topic = `persistent://public/${namespace}/${PREFIX}order.events`;
  const routes = pulsarConsumerTopics(CONSUMER, [topic], {
    prefix: PREFIX,
    retryTiersMs: [300],
  });
  for (const each of [topic, routes.deadLetter, ...routes.retry.map((tier) => tier.topic)])
    topics.add(each);
  const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
  const producer = await client.producer(topic);
  closers.push(() => producer.close());
  const poisoned = new Set<string>();
  const handler = createInboxConsumer(
    { name: CONSUMER, descriptors: [CANCELLED] },
    {
      db,
      inbox: { schema: pg.schema },
      handlers: {
        'order.OrderCancelled': {
          1: async (envelope: Envelope<string, 1, Payload>, ctx: ConsumerContext) => {
            if (poisoned.has(envelope.payload.orderId))
              throw new NonRetryableError('order is already shipped');
            await ctx.tx.query(`INSERT INTO "${pg.schema}".effects (message_id) VALUES ($1)`, [
              envelope.messageId,
            ]);
          },
        },
      },
    },
  );
  return {
    pulsar,
    pg,
    events,
    namespace,
    routes,
    client,
    poisoned,
    runner() {
      const runner = createPulsarConsumerRunner({ client, routes, handler, maxAttempts: 2 });
      closers.push(() => runner.stop());
      return runner;
    },
    async publish(envelope = createEnvelope(CANCELLED, { orderId: randomUUID() })) {
      await producer.send({
        key: envelope.aggregateId,
        payload: Buffer.from(JSON.stringify(envelope)),
        properties: { messageId: envelope.messageId, eventType: envelope.eventType },
      });
      return envelope;
    },
    async effects(messageId) {
      const { rows } = await pg.pool.query(
        `SELECT 1 FROM "${pg.schema}".effects WHERE message_id = $1`,
        [messageId],
      );
      return rows.length;
    },
    evgen: (...args) =>
      runCliCaptured(
        ...args,
        '--events',
        events,
        '--pulsar-url',
        pulsar.webUrl,
        '--pulsar-tiers',
        '300',
        '--prefix',
        PREFIX,
        ...(args[0] === 'trace' || args.includes('--unresolved')
          ? ['--database-url', TEST_DATABASE_URL, '--schema', pg.schema]
          : []),
      ),
  };
}

describe('operator commands over Pulsar (real broker, postgres)', () => {
  it('lists, shows, traces and replays a Pulsar dead letter; the replay is handled once', async () => {
    const s = await setup();
    const runner = s.runner();
    await runner.start();
    const good = await s.publish();
    const poison = createEnvelope(CANCELLED, { orderId: randomUUID() });
    s.poisoned.add(poison.payload.orderId);
    await s.publish(poison);
    await waitFor('one handled, one dead-lettered', () =>
      runner.metrics().handled === 1 && runner.metrics().deadLettered === 1 ? true : undefined,
    );

    const listed = await s.evgen('dlq', 'list', '--consumer', CONSUMER, '--json');
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(EXIT_OK);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        transport: 'pulsar',
        consumer: CONSUMER,
        messageId: poison.messageId,
        eventType: 'order.OrderCancelled',
        errorType: 'NonRetryableError',
        errorMessage: expect.stringContaining('NonRetryableError: order is already shipped'),
        attempts: 1,
      },
    ]);
    expect(JSON.parse(listed.stdout)[0].origin).toMatch(
      new RegExp(`^topic ${s.routes.topics[0]!.replace(/[.]/g, '\\.')}, message `),
    );
    // Listing removes nothing: the letter is there again, and still open in the inbox.
    const open = await s.evgen('dlq', 'list', '--unresolved');
    expect(open.code).toBe(EXIT_OK);
    expect(open.stdout).toContain(`${CONSUMER}: 1 dead letter(s), 1 unresolved`);
    expect(open.stdout).toContain('shipping-service: 0 dead letter(s), 0 unresolved');
    expect(open.stderr).toContain(
      `shipping-service has no dead-letter topic persistent://public/${s.namespace}/${PREFIX}shipping-service.dlt yet`,
    );

    const shown = await s.evgen('dlq', 'show', poison.messageId, '--consumer', CONSUMER);
    expect(shown.code).toBe(EXIT_OK);
    expect(shown.stdout).toContain(`REAL_TOPIC: ${s.routes.topics[0]}`);
    expect(shown.stdout).toContain(`"messageId":"${poison.messageId}"`);

    const traced = await s.evgen('trace', poison.messageId, '--json');
    expect(traced.stderr).toBe('');
    expect(traced.code).toBe(EXIT_OK);
    expect(JSON.parse(traced.stdout)).toMatchObject({
      inbox: [],
      notHandledBy: [CONSUMER, 'shipping-service'],
      deadLetters: [
        {
          transport: 'pulsar',
          consumer: CONSUMER,
          errorType: 'NonRetryableError',
          resolved: false,
        },
      ],
    });
    const goodTrace = await s.evgen('trace', good.messageId, '--json');
    expect(JSON.parse(goodTrace.stdout)).toMatchObject({
      inbox: [{ consumer: CONSUMER }],
      deadLetters: [],
    });

    const dryRun = await s.evgen('dlq', 'replay', '--all', '--dry-run');
    expect(dryRun.code).toBe(EXIT_OK);
    expect(dryRun.stdout).toContain(`${CONSUMER}: would replay 1 (${poison.messageId}), kept 0`);
    s.poisoned.delete(poison.payload.orderId);
    const replayed = await s.evgen(
      'dlq',
      'replay',
      '--consumer',
      CONSUMER,
      '--message-id',
      poison.messageId,
    );
    expect(replayed.code).toBe(EXIT_OK);
    expect(replayed.stdout).toContain(`${CONSUMER}: replayed 1 (${poison.messageId}), kept 0`);
    await waitFor('replayed letter handled', () =>
      runner.metrics().handled === 2 ? true : undefined,
    );
    expect(await s.effects(poison.messageId)).toBe(1);
    expect(await s.effects(good.messageId)).toBe(1);
    // A replayed Pulsar letter leaves its dead-letter subscription.
    const after = await s.evgen('dlq', 'list', '--consumer', CONSUMER, '--json');
    expect(JSON.parse(after.stdout)).toEqual([]);
    const afterTrace = JSON.parse((await s.evgen('trace', poison.messageId, '--json')).stdout);
    expect(afterTrace).toMatchObject({ inbox: [{ consumer: CONSUMER }], deadLetters: [] });
  });

  it('replays a letter to its consumer’s own retry topic, whatever topic its properties name', async () => {
    const s = await setup();
    // A letter the broker's own dead-letter policy could have moved whole: its producer's
    // properties name another topic as its origin and routing.
    const elsewhere = `persistent://public/${s.namespace}/${PREFIX}elsewhere`;
    const watcher = s.client.consumer({ topics: [elsewhere], subscription: 'watcher' });
    const arrived: string[] = [];
    await watcher.start({ onMessage: (message) => arrived.push(message.messageId) });
    closers.push(() => watcher.close());
    const letter = createEnvelope(CANCELLED, { orderId: randomUUID() });
    const dlt = await s.client.producer(s.routes.deadLetter);
    // The dead-letter subscription exists before the letter (what the runner's start does).
    const keeper = s.client.consumer({
      topics: [s.routes.deadLetter],
      subscription: s.routes.deadLetterSubscription,
      subscriptionType: 'Shared',
    });
    await keeper.start({ onMessage: () => undefined });
    await keeper.close();
    await dlt.send({
      key: letter.aggregateId,
      payload: Buffer.from(JSON.stringify(letter)),
      properties: {
        messageId: letter.messageId,
        eventType: letter.eventType,
        REAL_TOPIC: elsewhere,
        'evgen-original-topic': elsewhere,
        'evgen-error-type': 'NonRetryableError',
        'evgen-attempts': '1',
      },
    });
    await dlt.close();

    const replayed = await s.evgen('dlq', 'replay', '--consumer', CONSUMER, '--all');
    expect(replayed.code).toBe(EXIT_OK);
    expect(replayed.stdout).toContain(`${CONSUMER}: replayed 1 (${letter.messageId}), kept 0`);
    const runner = s.runner();
    await runner.start();
    await waitFor('replayed letter handled', () =>
      runner.metrics().handled === 1 ? true : undefined,
    );
    expect(await s.effects(letter.messageId)).toBe(1);
    const stats = (await s.pulsar.admin('GET', `${elsewhere.replace('://', '/')}/stats`)) as {
      msgInCounter: number;
    };
    expect(stats.msgInCounter).toBe(0);
    expect(arrived).toEqual([]);
  });

  it('refuses --transport pulsar without a URL, and a URL that is not the HTTP one (exit 2)', async () => {
    const events = writeCatalog('unused');
    const previous = process.env.PULSAR_URL;
    delete process.env.PULSAR_URL;
    try {
      const none = await runCliCaptured('dlq', 'list', '--events', events, '--transport', 'pulsar');
      expect(none.code).toBe(EXIT_BAD_INPUT);
      expect(none.stderr).toContain('neither --pulsar-url nor PULSAR_URL is set');
      const binary = await runCliCaptured(
        'dlq',
        'list',
        '--events',
        events,
        '--pulsar-url',
        'pulsar://127.0.0.1:6650',
      );
      expect(binary.code).toBe(EXIT_BAD_INPUT);
      expect(binary.stderr).toContain("is not the broker's HTTP URL");
      const tiers = await runCliCaptured(
        'dlq',
        'list',
        '--events',
        events,
        '--pulsar-url',
        'http://127.0.0.1:1',
        '--pulsar-tiers',
        '600,300',
      );
      expect(tiers.code).toBe(EXIT_BAD_INPUT);
      expect(tiers.stderr).toContain('--pulsar-tiers 600,300 is not a list of ascending');
    } finally {
      if (previous !== undefined) process.env.PULSAR_URL = previous;
    }
  });
});
