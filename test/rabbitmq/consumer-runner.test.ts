import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  NonRetryableError,
  RetryableError,
  createAmqpConnector,
  createRabbitMqConsumerRunner,
  consumerQueueStats,
  createEnvelope,
  publishEnvelope,
  type AmqpConnector,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type Envelope,
  type MessageHandler,
  type ResolvedTopology,
} from 'evgen/runtime';
import { EVGEN_HEADERS, envelopeToAmqpMessage } from '../../src/runtime/rabbitmq/amqp-message.js';
import {
  SAMPLE_ORDER_CREATED as orderCreated,
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  closeConnectionFromBroker,
  createTestBroker,
  drainQueue,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

const route = { exchange: 'order', routingKey: 'order.created' };

describe('consumer runner (real RabbitMQ)', () => {
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let producer: ConfirmedPublisher;
  let connector: AmqpConnector;
  let connectionName: string;
  let runner: ConsumerRunner | undefined;
  let events: ConsumerRunnerEvent[];
  /** Receives a copy of every retry and dead-letter publish (bound to the retry exchange). */
  let spyQueue: string;

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    producer = new ConfirmedPublisher(broker.connection);
    connectionName = `evgen-test-runner-${randomBytes(4).toString('hex')}`;
    connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL,
      connectionName,
      backoff: { baseMs: 50, capMs: 500 },
    });
    events = [];
    runner = undefined;
    const routes = topology.consumers['inventory-service']!;
    spyQueue = `${broker.prefix}spy`;
    await broker.channel.assertQueue(spyQueue, { durable: false });
    broker.track('queue', spyQueue);
    for (const key of [...routes.tiers.map((t) => t.routingKey), routes.deadRoutingKey]) {
      await broker.channel.bindQueue(spyQueue, routes.retryExchange, key);
    }
  });

  afterEach(async () => {
    await runner?.stop();
    await connector.close();
    await producer.close();
    await broker.cleanup();
  });

  function start(handler: MessageHandler, prefetch = 1): Promise<void> {
    runner = createRabbitMqConsumerRunner({
      handler,
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: connector,
        routes: topology.consumers['inventory-service']!,
        prefetch,
        reconnectBackoff: { baseMs: 50, capMs: 500 },
      },
    });
    return runner.start();
  }

  async function publish(orderId: string): Promise<Envelope> {
    const envelope = createEnvelope(orderCreated, { orderId }, { traceId: `trace-${orderId}` });
    await publishEnvelope(producer, envelope, route, {
      prefix: broker.prefix,
      headers: { traceparent: `tp-${orderId}` },
    });
    return envelope;
  }

  const ofType = <T extends ConsumerRunnerEvent['type']>(type: T) =>
    events.filter((e): e is Extract<ConsumerRunnerEvent, { type: T }> => e.type === type);

  it('retries a failing handler through the delay tiers with the same messageId, then handles it once', async () => {
    const calls: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        const id = (raw as Envelope).messageId;
        calls.push(id);
        if (calls.length <= 2) throw new RetryableError(`transient failure ${calls.length}`);
        return 'handled';
      },
    });
    const sent = await publish('o-retry');
    await waitFor('handled', () => ofType('handled')[0]);
    expect(calls).toEqual([sent.messageId, sent.messageId, sent.messageId]);
    expect(ofType('retried').map((e) => [e.messageId, e.attempt, e.delayMs])).toEqual([
      [sent.messageId, 1, 100],
      [sent.messageId, 2, 200],
    ]);
    expect(ofType('handled')).toEqual([
      { type: 'handled', messageId: sent.messageId, attempt: 3, result: 'handled' },
    ]);
    expect(runner!.metrics()).toEqual({
      handled: 1,
      duplicates: 0,
      skipped: 0,
      retried: 2,
      deadLettered: 0,
      settleFailures: 0,
      restarts: 0,
      requeued: 0,
      pauses: 0,
      gapWaits: 0,
      redelivered: 0,
    });

    const copies = await drainQueue(broker.channel, spyQueue);
    expect(copies.map((c) => c.fields.routingKey)).toEqual(['retry.100ms', 'retry.200ms']);
    for (const [index, copy] of copies.entries()) {
      expect(copy.properties.messageId).toBe(sent.messageId);
      expect(copy.properties.type).toBe('order.OrderCreated');
      expect(copy.properties.deliveryMode).toBe(2);
      expect(JSON.parse(copy.content.toString())).toEqual(sent);
      const headers = copy.properties.headers!;
      expect(headers[EVGEN_HEADERS.attempt]).toBe(index + 2);
      expect(headers[EVGEN_HEADERS.originalExchange]).toBe(`${broker.prefix}order`);
      expect(headers[EVGEN_HEADERS.originalRoutingKey]).toBe('order.created');
      expect(headers[EVGEN_HEADERS.lastError]).toBe(`transient failure ${index + 1}`);
      expect(headers[EVGEN_HEADERS.lastErrorType]).toBe('RetryableError');
      expect(headers.traceparent).toBe('tp-o-retry');
      expect(headers['x-death']).toBeUndefined();
    }
    // The first failure time is kept from the first retry on.
    expect(copies[1]!.properties.headers![EVGEN_HEADERS.firstFailureAt]).toBe(
      copies[0]!.properties.headers![EVGEN_HEADERS.firstFailureAt],
    );
    const routes = topology.consumers['inventory-service']!;
    for (const queue of [routes.queue, routes.deadQueue, ...routes.tiers.map((t) => t.queue)]) {
      expect((await broker.channel.checkQueue(queue)).messageCount).toBe(0);
    }
  });

  it('dead-letters a poison message with diagnostics while the messages behind it are handled', async () => {
    const handled: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        const envelope = raw as Envelope<string, number, { orderId: string }>;
        if (envelope.payload.orderId === 'o-poison')
          throw new NonRetryableError('order o-poison is in an illegal state');
        handled.push(envelope.payload.orderId);
        return 'handled';
      },
    });
    await publish('o-1');
    const poison = await publish('o-poison');
    await publish('o-2');
    await waitFor('two handled', () => (handled.length === 2 ? true : undefined));
    await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    expect(handled).toEqual(['o-1', 'o-2']);
    expect(ofType('retried')).toHaveLength(0);
    expect(runner!.metrics()).toMatchObject({
      handled: 2,
      retried: 0,
      deadLettered: 1,
      settleFailures: 0,
    });

    const [dead, ...more] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(more).toHaveLength(0);
    expect(dead!.properties.messageId).toBe(poison.messageId);
    expect(JSON.parse(dead!.content.toString())).toEqual(poison);
    const headers = dead!.properties.headers!;
    expect(headers).toMatchObject({
      [EVGEN_HEADERS.errorType]: 'NonRetryableError',
      [EVGEN_HEADERS.errorMessage]: 'order o-poison is in an illegal state',
      [EVGEN_HEADERS.attempts]: 1,
      [EVGEN_HEADERS.consumer]: 'inventory-service',
      [EVGEN_HEADERS.originalExchange]: `${broker.prefix}order`,
      [EVGEN_HEADERS.originalRoutingKey]: 'order.created',
      [EVGEN_HEADERS.traceId]: 'trace-o-poison',
      [EVGEN_HEADERS.aggregateId]: 'o-poison',
      traceparent: 'tp-o-poison',
    });
    expect(typeof headers[EVGEN_HEADERS.firstFailureAt]).toBe('string');
    expect(typeof headers[EVGEN_HEADERS.lastFailureAt]).toBe('string');
  });

  it('dead-letters unparseable bodies and messageId mismatches without calling the handler', async () => {
    const seen: unknown[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        seen.push(raw);
        return 'handled';
      },
    });
    const exchange = `${broker.prefix}order`;
    await producer.publish(exchange, 'order.created', Buffer.from('{not json'), {
      messageId: 'bad-json',
    });
    const body = { messageId: 'body-id', eventType: 'order.OrderCreated', payload: {} };
    await producer.publish(exchange, 'order.created', Buffer.from(JSON.stringify(body)), {
      messageId: 'header-id',
    });
    const good = await publish('o-ok');
    await waitFor('two dead letters', () =>
      ofType('dead-lettered').length === 2 ? true : undefined,
    );
    await waitFor('handled', () => ofType('handled')[0]);
    expect(seen).toEqual([good]);
    const dead = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(dead.map((d) => d.properties.messageId).sort()).toEqual(['bad-json', 'header-id']);
    for (const letter of dead)
      expect(letter.properties.headers![EVGEN_HEADERS.errorType]).toBe('MalformedMessageError');
    const mismatch = dead.find((d) => d.properties.messageId === 'header-id')!;
    expect(mismatch.properties.headers![EVGEN_HEADERS.errorMessage]).toContain(
      'differs from body messageId body-id',
    );
    expect(mismatch.content.toString()).toBe(JSON.stringify(body));
  });

  it("takes the body's messageId when a producer sent no messageId property (handled, and its retry copy and dead letter keep that id)", async () => {
    const seen: unknown[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        seen.push(raw);
        throw new RetryableError('downstream is down');
      },
    });
    const body = { messageId: 'body-only-id', eventType: 'order.OrderCreated', payload: {} };
    // A foreign producer that sets no property (a plain channel: the confirmed publisher requires one).
    broker.channel.publish(
      `${broker.prefix}order`,
      'order.created',
      Buffer.from(JSON.stringify(body)),
      { persistent: true },
    );
    const event = await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    expect(seen).toEqual([body, body, body]);
    expect(ofType('retried').map((retry) => retry.messageId)).toEqual([
      'body-only-id',
      'body-only-id',
    ]);
    expect(event.messageId).toBe('body-only-id');
    const [letter, ...more] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(more).toHaveLength(0);
    // A dead letter never mints a new id when the message carries one.
    expect(letter!.properties.messageId).toBe('body-only-id');
    expect(letter!.properties.headers![EVGEN_HEADERS.errorType]).toBe('RetryableError');
  });

  it('dead-letters a message with neither a messageId property nor one in its body', async () => {
    let calls = 0;
    await start({
      name: 'inventory-service',
      handle: async () => {
        calls++;
        return 'handled';
      },
    });
    broker.channel.publish(
      `${broker.prefix}order`,
      'order.created',
      Buffer.from(JSON.stringify({ eventType: 'order.OrderCreated', payload: {} })),
      { persistent: true },
    );
    await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    const [letter] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(calls).toBe(0);
    expect(letter!.properties.headers![EVGEN_HEADERS.errorMessage]).toContain(
      'body has no messageId',
    );
  });

  it('dead-letters a retryable failure once the attempts are spent', async () => {
    let calls = 0;
    await start({
      name: 'inventory-service',
      async handle() {
        calls++;
        // Retryable (a deadlock), but about this message's transaction, not an unavailable database.
        throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      },
    });
    const sent = await publish('o-always-failing');
    const dead = await waitFor('dead-lettered', () => ofType('dead-lettered')[0]);
    expect(dead.attempts).toBe(3);
    expect(calls).toBe(3);
    const [letter] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(letter!.properties.messageId).toBe(sent.messageId);
    const headers = letter!.properties.headers!;
    expect(headers[EVGEN_HEADERS.attempts]).toBe(3);
    expect(headers[EVGEN_HEADERS.errorMessage]).toBe('deadlock detected');
    expect(Date.parse(headers[EVGEN_HEADERS.lastFailureAt] as string)).toBeGreaterThan(
      Date.parse(headers[EVGEN_HEADERS.firstFailureAt] as string),
    );
    expect(headers['x-death']).toBeUndefined();
  });

  it('consumerQueueStats reports waiting, retrying and dead messages and attached consumers', async () => {
    const routes = topology.consumers['inventory-service']!;
    expect(await consumerQueueStats(broker.connection, routes)).toEqual({
      waiting: 0,
      consumers: 0,
      retrying: 0,
      dead: 0,
    });
    await publish('o-waiting-1');
    await publish('o-waiting-2');
    const retry = envelopeToAmqpMessage(createEnvelope(orderCreated, { orderId: 'o-retrying' }));
    await producer.publish('', routes.tiers[1]!.queue, retry.content, retry.properties);
    const dead = envelopeToAmqpMessage(createEnvelope(orderCreated, { orderId: 'o-dead' }));
    await producer.publish('', routes.deadQueue, dead.content, dead.properties);
    expect(await consumerQueueStats(connector, routes)).toEqual({
      waiting: 2,
      consumers: 0,
      retrying: 1,
      dead: 1,
    });

    await start({ name: 'inventory-service', handle: async () => 'handled' });
    // The retry copy comes back from its tier after 200 ms and is handled too.
    await waitFor('three handled', () => (ofType('handled').length === 3 ? true : undefined));
    expect(await consumerQueueStats(broker.connection, routes)).toEqual({
      waiting: 0,
      consumers: 1,
      retrying: 0,
      dead: 1,
    });
    await expect(
      consumerQueueStats(broker.connection, { ...routes, queue: `${broker.prefix}missing` }),
    ).rejects.toThrow(/NOT_FOUND/);
  });

  it('reconnects after the broker closes its connection and resumes consuming', async () => {
    const handled: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        handled.push((raw as Envelope<string, number, { orderId: string }>).payload.orderId);
        return 'handled';
      },
    });
    await publish('o-before');
    await waitFor('first handled', () => (handled.length === 1 ? true : undefined));
    expect(await closeConnectionFromBroker(connectionName)).toBe(1);
    await waitFor('restart', () => ofType('restarting')[0]);
    await waitFor('consuming again', () => (ofType('consuming').length === 2 ? true : undefined));
    await publish('o-after');
    await waitFor('second handled', () => (handled.length === 2 ? true : undefined));
    expect(handled).toEqual(['o-before', 'o-after']);
  });

  it('keeps a delivery unacked when its retry copy is not confirmed, so it is redelivered, never lost', async () => {
    const routes = topology.consumers['inventory-service']!;
    // The retry exchange is gone: publishing a retry copy closes the confirm channel (404).
    await broker.channel.deleteExchange(routes.retryExchange);
    let restored = false;
    const calls: string[] = [];
    await start({
      name: 'inventory-service',
      async handle(raw) {
        calls.push((raw as Envelope).messageId);
        if (!restored) throw new RetryableError('dependency down');
        return 'handled';
      },
    });
    const sent = await publish('o-unconfirmed-retry');
    await waitFor('a failed retry publish', () => ofType('error')[0]);
    await waitFor('a restart', () => ofType('restarting')[0]);
    await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    restored = true;
    const handled = await waitFor('handled after redelivery', () => ofType('handled')[0]);
    expect(handled.messageId).toBe(sent.messageId);
    expect(new Set(calls)).toEqual(new Set([sent.messageId]));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(ofType('handled')).toHaveLength(1);
    // The unconfirmed retry copy is visible in the metrics, as is the restart it caused.
    expect(runner!.metrics().settleFailures).toBeGreaterThanOrEqual(1);
    expect(runner!.metrics().restarts).toBeGreaterThanOrEqual(1);
    expect(runner!.metrics()).toMatchObject({ handled: 1, deadLettered: 0 });
    expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(0);
    expect((await broker.channel.checkQueue(routes.queue)).messageCount).toBe(0);
  });

  it('start() rejects when the queue does not exist, without retrying in the background', async () => {
    const routes = {
      ...topology.consumers['inventory-service']!,
      queue: `${broker.prefix}missing`,
    };
    runner = createRabbitMqConsumerRunner({
      handler: { name: 'inventory-service', handle: async () => 'handled' },
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: connector,
        routes,
      },
    });
    await expect(runner.start()).rejects.toThrow(/NOT_FOUND/);
    await runner.stop();
    expect(events.filter((e) => e.type === 'restarting' || e.type === 'consuming')).toEqual([]);
    runner = undefined;
  });

  it('stop() waits for in-flight handlers and acks them before closing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const order: string[] = [];
    await start({
      name: 'inventory-service',
      async handle() {
        entered = true;
        await gate;
        order.push('handler finished');
        return 'handled';
      },
    });
    await publish('o-slow');
    await waitFor('handler entered', () => (entered ? true : undefined));
    expect(runner!.inFlight).toBe(1);
    const stopped = runner!.stop().then(() => order.push('stopped'));
    // A publish after stop() began is not taken by this runner.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await stopped;
    expect(order).toEqual(['handler finished', 'stopped']);
    expect(ofType('handled')).toHaveLength(1);
    // Acked before the channel closed: nothing comes back to the queue.
    expect(
      (await broker.channel.checkQueue(topology.consumers['inventory-service']!.queue))
        .messageCount,
    ).toBe(0);
  });
  it('runners started and stopped on a connection the caller owns leave no listeners on it and keep it open', async () => {
    const connection = broker.connection;
    const before = connection.listenerCount('close');
    for (let index = 0; index < 12; index++) {
      const own = createRabbitMqConsumerRunner({
        handler: { name: 'inventory-service', handle: async () => 'handled' },
        rabbitmq: {
          connection,
          routes: topology.consumers['inventory-service']!,
        },
      });
      await own.start();
      await own.stop();
    }
    expect(connection.listenerCount('close')).toBe(before);
    // The caller's connection is still usable after the runners stopped.
    const channel = await connection.createChannel();
    await channel.close();
  });
});
