/**
 * Messages a hostile or broken producer can send to a consumer runner (real RabbitMQ): none may
 * loop the consumer, stall it or steer evgen's own retry bookkeeping.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  NonRetryableError,
  RetryableError,
  replayRabbitMqDeadLetters,
  createAmqpConnector,
  createRabbitMqConsumerRunner,
  createEnvelope,
  listRabbitMqDeadLetters,
  type AmqpConnector,
  type ConsumerRoutes,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type MessageHandler,
} from 'evgen/runtime';
import { EVGEN_HEADERS, envelopeToAmqpMessage } from '../../src/runtime/rabbitmq/amqp-message.js';
import {
  SAMPLE_ORDER_CREATED as orderCreated,
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  createTestBroker,
  drainQueue,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';
import { rawAmqpPublish } from '../support/raw-amqp-publish.js';

/** A header table amqplib decodes but cannot encode again: its own `!` key reads as a type tag. */
const UNENCODABLE = { h: { '!': 'object', value: { '!': 'bogus' } } };

describe('consumer runner against hostile messages (real RabbitMQ)', () => {
  let broker: TestBroker;
  let routes: ConsumerRoutes;
  let connector: AmqpConnector;
  let producer: ConfirmedPublisher;
  let runner: ConsumerRunner | undefined;
  let events: ConsumerRunnerEvent[];
  let exchange: string;

  beforeEach(async () => {
    broker = await createTestBroker();
    const topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    routes = topology.consumers['inventory-service']!;
    exchange = `${broker.prefix}order`;
    producer = new ConfirmedPublisher(broker.connection);
    connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL,
      connectionName: `evgen-test-hostile-${randomBytes(4).toString('hex')}`,
      backoff: { baseMs: 50, capMs: 500 },
    });
    events = [];
    runner = undefined;
  });

  afterEach(async () => {
    await runner?.stop();
    await connector.close();
    await producer.close();
    await broker.cleanup();
  });

  function start(handler: MessageHandler, messageLimits = {}): Promise<void> {
    runner = createRabbitMqConsumerRunner({
      handler,
      messageLimits,
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: connector,
        routes,
        prefetch: 5,
        reconnectBackoff: { baseMs: 50, capMs: 500 },
      },
    });
    return runner.start();
  }

  const ofType = <T extends ConsumerRunnerEvent['type']>(type: T) =>
    events.filter((e): e is Extract<ConsumerRunnerEvent, { type: T }> => e.type === type);

  /** Publishes raw bytes with raw headers, as a foreign producer could (plain channel). */
  async function publishRaw(
    content: Buffer,
    headers: Record<string, unknown>,
    messageId: string,
  ): Promise<void> {
    const channel = await broker.connection.createConfirmChannel();
    channel.publish(exchange, 'order.created', content, { messageId, persistent: true, headers });
    await channel.waitForConfirms();
    await channel.close();
  }

  function envelopeFor(orderId: string) {
    return envelopeToAmqpMessage(createEnvelope(orderCreated, { orderId }));
  }

  it('dead-letters a body that is not JSON with headers amqplib cannot re-encode, without a single restart', async () => {
    const handled: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        handled.push((raw as { payload: { orderId: string } }).payload.orderId);
        return 'handled';
      },
    });
    await publishRaw(Buffer.from('not json'), UNENCODABLE, 'poison-headers');
    const good = envelopeFor('o-behind');
    await producer.publish(exchange, 'order.created', good.content, good.properties);
    await waitFor('the dead letter', () => ofType('dead-lettered')[0]);
    await waitFor('the message behind it', () => (handled.length === 1 ? true : undefined));
    const [letter, ...more] = await drainQueue(broker.channel, routes.deadQueue);
    expect(more).toHaveLength(0);
    expect(letter!.properties.messageId).toBe('poison-headers');
    expect(letter!.content.toString()).toBe('not json');
    const headers = letter!.properties.headers!;
    expect(headers[EVGEN_HEADERS.errorType]).toBe('MalformedMessageError');
    // The original header survives, serialized.
    expect(JSON.parse(String(headers['x-evgen-unencodable-headers']))).toEqual({
      h: { '!': 'bogus' },
    });
    expect(headers.h).toBeUndefined();
    expect(runner!.metrics()).toMatchObject({ restarts: 0, deadLettered: 1, handled: 1 });
    expect(ofType('restarting')).toHaveLength(0);
    expect((await broker.channel.checkQueue(routes.queue)).messageCount).toBe(0);
  });

  it('dead-letters what cannot be copied as it is with the cut named: a 300-character body id, a 100 KB header', async () => {
    const handled: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        const body = raw as { messageId: string; payload: { orderId: string } };
        if (body.messageId.length > 36) throw new RetryableError('not a UUID, retry anyway');
        if (body.payload.orderId === 'o-blob') throw new RetryableError('keeps failing');
        handled.push(body.payload.orderId);
        return 'handled';
      },
    });
    const longId = createEnvelope(orderCreated, { orderId: 'o-long' });
    await rawAmqpPublish({
      url: TEST_RABBITMQ_URL,
      exchange,
      routingKey: 'order.created',
      body: Buffer.from(JSON.stringify({ ...longId, messageId: 'm'.repeat(300) })),
      headers: {},
    });
    const blob = envelopeFor('o-blob');
    await rawAmqpPublish({
      url: TEST_RABBITMQ_URL,
      exchange,
      routingKey: 'order.created',
      body: blob.content,
      headers: { 'x-producer-blob': 'b'.repeat(100 * 1024) },
      messageId: blob.properties.messageId,
    });
    await waitFor('two dead letters', () =>
      ofType('dead-lettered').length === 2 ? true : undefined,
    );
    const letters = await drainQueue(broker.channel, routes.deadQueue);
    expect(letters).toHaveLength(2);
    const big = letters.find((l) => l.properties.messageId === blob.properties.messageId);
    const long = letters.find((l) => l !== big);
    // The long id never became a property: no retry copy (it would come back under another id).
    expect(long!.properties.messageId).toMatch(/^evgen-dead-/);
    expect(JSON.parse(String(long!.properties.headers![EVGEN_HEADERS.cut]))).toEqual({
      'property messageId': 'body messageId not used: 300 bytes, an AMQP shortstr holds 255',
    });
    expect(String(long!.properties.headers![EVGEN_HEADERS.errorMessage])).toContain(
      'cannot be carried as an AMQP messageId property',
    );
    // The header went through the retry tiers and into the dead letter as a named cut.
    expect(big!.properties.messageId).toBe(blob.properties.messageId);
    expect(big!.properties.headers!['x-producer-blob']).toBeUndefined();
    expect(JSON.parse(String(big!.properties.headers![EVGEN_HEADERS.cut]))).toEqual({
      'header x-producer-blob': expect.stringMatching(/^dropped: 102\d{3} bytes/),
    });
    expect(big!.properties.headers![EVGEN_HEADERS.attempts]).toBe(routes.maxAttempts);
    expect(runner!.metrics()).toMatchObject({ restarts: 0, settleFailures: 0, deadLettered: 2 });
  });

  it("never obeys a producer's CC/BCC: neither the dead letter nor its replay reaches the queue they name", async () => {
    // The victim is reachable by name through the default exchange (replay) and by a routing key
    // on the retry exchange (dead letters): the two routes a copied CC header would take.
    const victim = `${broker.prefix}victim`;
    await broker.channel.assertQueue(victim, { durable: false });
    broker.track('queue', victim);
    await broker.channel.bindQueue(victim, routes.retryExchange, 'victim-key');
    let calls = 0;
    await start({
      name: 'inventory-service',
      async handle() {
        calls++;
        if (calls === 1) throw new NonRetryableError('refused the first time');
        return 'handled';
      },
    });
    const message = envelopeFor('o-cc');
    await publishRaw(
      message.content,
      { ...message.properties.headers, CC: [victim, 'victim-key'], BCC: [victim] },
      message.properties.messageId,
    );
    await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    const [letter] = await listRabbitMqDeadLetters({ connection: broker.connection, routes });
    expect(letter!.headers.CC).toBeUndefined();
    expect(JSON.parse(String(letter!.headers[EVGEN_HEADERS.cut]))).toEqual({
      'header CC': 'dropped: sender-selected distribution is never copied',
    });
    const replay = await replayRabbitMqDeadLetters({ connection: broker.connection, routes });
    expect(replay.replayed).toEqual([message.properties.messageId]);
    await waitFor('the replay handled', () => ofType('handled')[0]);
    expect((await broker.channel.checkQueue(victim)).messageCount).toBe(0);
    expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(0);
    expect(runner!.metrics()).toMatchObject({ deadLettered: 1, handled: 1, restarts: 0 });
  });

  it('replays a dead letter that already carries CC (written by an older version) only into the work queue', async () => {
    const victim = `${broker.prefix}victim`;
    await broker.channel.assertQueue(victim, { durable: false });
    broker.track('queue', victim);
    const message = envelopeFor('o-legacy-cc');
    // Into the dead queue through the retry exchange, where the CC names no binding.
    const channel = await broker.connection.createConfirmChannel();
    channel.publish(routes.retryExchange, routes.deadRoutingKey, message.content, {
      ...message.properties,
      headers: { ...message.properties.headers, CC: [victim] },
    });
    await channel.waitForConfirms();
    await channel.close();
    const replay = await replayRabbitMqDeadLetters({ connection: broker.connection, routes });
    expect(replay.replayed).toEqual([message.properties.messageId]);
    const [copy, ...more] = await drainQueue(broker.channel, routes.queue);
    expect(more).toHaveLength(0);
    expect(copy!.properties.headers!.CC).toBeUndefined();
    expect((await broker.channel.checkQueue(victim)).messageCount).toBe(0);
  });

  it('retries a failing message with unencodable headers through the tiers (headers serialized), never restarting', async () => {
    let calls = 0;
    await start({
      name: 'inventory-service',
      async handle() {
        calls++;
        if (calls === 1) throw new RetryableError('dependency down');
        return 'handled';
      },
    });
    const message = envelopeFor('o-retry');
    await publishRaw(
      message.content,
      { ...message.properties.headers, ...UNENCODABLE },
      message.properties.messageId,
    );
    const handled = await waitFor('handled on the second attempt', () => ofType('handled')[0]);
    expect(handled.attempt).toBe(2);
    expect(runner!.metrics()).toMatchObject({ restarts: 0, retried: 1, settleFailures: 0 });
  });

  it('ignores x-evgen-attempt and x-evgen-original-* set by a producer', async () => {
    const spy = `${broker.prefix}spy`;
    await broker.channel.assertQueue(spy, { durable: false });
    broker.track('queue', spy);
    await broker.channel.bindQueue(spy, routes.retryExchange, routes.tiers[0]!.routingKey);
    let calls = 0;
    await start({
      name: 'inventory-service',
      async handle() {
        calls++;
        if (calls === 1) throw new RetryableError('dependency down');
        return 'handled';
      },
    });
    const message = envelopeFor('o-spoof');
    await publishRaw(
      message.content,
      {
        ...message.properties.headers,
        [EVGEN_HEADERS.attempt]: 99,
        [EVGEN_HEADERS.originalExchange]: 'spoofed-exchange',
        [EVGEN_HEADERS.originalRoutingKey]: 'spoofed.key',
        [EVGEN_HEADERS.firstFailureAt]: '1999-01-01T00:00:00.000Z',
        [EVGEN_HEADERS.consumer]: 'someone-else',
      },
      message.properties.messageId,
    );
    const retried = await waitFor('retried', () => ofType('retried')[0]);
    expect(retried.attempt).toBe(1);
    expect(ofType('dead-lettered')).toHaveLength(0);
    const handled = await waitFor('handled', () => ofType('handled')[0]);
    expect(handled.attempt).toBe(2);
    const [copy] = await drainQueue(broker.channel, spy);
    const headers = copy!.properties.headers!;
    expect(headers[EVGEN_HEADERS.attempt]).toBe(2);
    expect(headers[EVGEN_HEADERS.originalExchange]).toBe(exchange);
    expect(headers[EVGEN_HEADERS.originalRoutingKey]).toBe('order.created');
    expect(headers[EVGEN_HEADERS.firstFailureAt]).not.toBe('1999-01-01T00:00:00.000Z');
    expect(headers[EVGEN_HEADERS.consumer]).toBeUndefined();
  });

  it('dead-letters a message whose retry copy is unroutable instead of redelivering it', async () => {
    // The first delay tier's queue is gone: the retry copy is returned unroutable.
    await broker.channel.deleteQueue(routes.tiers[0]!.queue);
    await start({
      name: 'inventory-service',
      async handle() {
        throw new RetryableError('dependency down');
      },
    });
    const message = envelopeFor('o-no-tier');
    await producer.publish(exchange, 'order.created', message.content, message.properties);
    const dead = await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    expect(dead.attempts).toBe(1);
    const [letter] = await drainQueue(broker.channel, routes.deadQueue);
    expect(letter!.properties.messageId).toBe(message.properties.messageId);
    expect(String(letter!.properties.headers![EVGEN_HEADERS.errorMessage])).toContain(
      'retry copy could not be published',
    );
    expect(runner!.metrics()).toMatchObject({ restarts: 0, deadLettered: 1, settleFailures: 1 });
  });

  it('dead-letters bodies beyond the message limits before parsing them', async () => {
    const seen: unknown[] = [];
    await start(
      {
        name: 'inventory-service',
        async handle(raw) {
          seen.push(raw);
          return 'handled';
        },
      },
      { maxBytes: 4096, maxDepth: 8 },
    );
    await publishRaw(Buffer.from(`{"pad":"${'x'.repeat(5000)}"}`), {}, 'too-large');
    await publishRaw(Buffer.from(`${'['.repeat(20)}${']'.repeat(20)}`), {}, 'too-deep');
    await publishRaw(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), {}, 'bad-utf8');
    await publishRaw(Buffer.from('{"n":9007199254740993}'), {}, 'big-integer');
    await waitFor('four dead letters', () =>
      ofType('dead-lettered').length === 4 ? true : undefined,
    );
    expect(seen).toEqual([]);
    const letters = await drainQueue(broker.channel, routes.deadQueue);
    const reasons = Object.fromEntries(
      letters.map((l) => [
        l.properties.messageId,
        String(l.properties.headers![EVGEN_HEADERS.errorMessage]),
      ]),
    );
    expect(reasons['too-large']).toMatch(/more than the limit of 4096/);
    expect(reasons['too-deep']).toMatch(/deeper than 8 levels/);
    expect(reasons['bad-utf8']).toMatch(/not valid UTF-8/);
    expect(reasons['big-integer']).toMatch(/9007199254740993.*2\^53/);
  });
});
