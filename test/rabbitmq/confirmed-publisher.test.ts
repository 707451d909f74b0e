import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ChannelClosedError,
  ConfirmedPublisher,
  PublishNackedError,
  PublishTimeoutError,
  createAmqpConnector,
  UnknownEventError,
  UnroutableError,
  createEnvelope,
  publishEnvelope,
  rabbitRelayPublisher,
  type Envelope,
  type ResolvedTopology,
} from 'evgen/runtime';
import { classifyError } from '../../src/runtime/errors.js';
import { EVGEN_HEADERS } from '../../src/runtime/rabbitmq/amqp-message.js';
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

const routes = {
  'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' },
  'order.OrderCancelled': { exchange: 'order', routingKey: 'order.cancelled' },
  // Declared exchange, but no queue binds this key: every publish is returned.
  'order.OrderArchived': { exchange: 'order', routingKey: 'order.archived' },
};

function envelope(orderId: string, meta: { traceId?: string } = {}): Envelope {
  return createEnvelope(
    orderCreated,
    { orderId },
    { aggregateVersion: 3, correlationId: 'corr-1', causationId: 'cause-1', ...meta },
  );
}

describe('ConfirmedPublisher', () => {
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let publisher: ConfirmedPublisher;

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    publisher = new ConfirmedPublisher(broker.connection);
  });
  afterEach(async () => {
    await publisher.close();
    await broker.cleanup();
  });

  it('publishes a persistent message whose properties and headers carry the envelope', async () => {
    const sent = envelope('o-1', { traceId: 'trace-1' });
    await publishEnvelope(publisher, sent, routes['order.OrderCreated'], {
      prefix: broker.prefix,
      headers: { traceparent: '00-abc-01' },
    });
    const [message, ...rest] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.queue,
    );
    expect(rest).toHaveLength(0);
    expect(JSON.parse(message!.content.toString())).toEqual(sent);
    expect(message!.properties).toMatchObject({
      messageId: sent.messageId,
      type: 'order.OrderCreated',
      contentType: 'application/json',
      deliveryMode: 2,
      correlationId: 'corr-1',
    });
    expect(message!.properties.timestamp).toBe(Math.floor(Date.parse(sent.occurredAt) / 1000));
    expect(message!.properties.headers).toMatchObject({
      traceparent: '00-abc-01',
      [EVGEN_HEADERS.schemaVersion]: 1,
      [EVGEN_HEADERS.aggregateType]: 'Order',
      [EVGEN_HEADERS.aggregateId]: 'o-1',
      [EVGEN_HEADERS.aggregateVersion]: 3,
      [EVGEN_HEADERS.traceId]: 'trace-1',
      [EVGEN_HEADERS.correlationId]: 'corr-1',
      [EVGEN_HEADERS.causationId]: 'cause-1',
    });
  });

  it('rejects an unroutable publish with UnroutableError although the broker acked it, and still confirms the others', async () => {
    const lost = envelope('o-lost');
    const kept = envelope('o-kept');
    const results = await Promise.allSettled([
      publishEnvelope(publisher, lost, routes['order.OrderArchived'], { prefix: broker.prefix }),
      publishEnvelope(publisher, kept, routes['order.OrderCreated'], { prefix: broker.prefix }),
    ]);
    expect(results[0].status).toBe('rejected');
    const error = (results[0] as PromiseRejectedResult).reason as UnroutableError;
    expect(error).toBeInstanceOf(UnroutableError);
    expect(error.messageId).toBe(lost.messageId);
    expect(error.routingKey).toBe('order.archived');
    expect(error.replyText).toBe('NO_ROUTE');
    expect(error.retryable).toBe(true);
    expect(results[1].status).toBe('fulfilled');
    const delivered = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.queue,
    );
    expect(delivered.map((m) => m.properties.messageId)).toEqual([kept.messageId]);
    expect(publisher.inFlight).toBe(0);
    // Confirm failures are counted for metrics.
    expect(publisher.stats).toEqual({
      confirmed: 1,
      returned: 1,
      nacked: 0,
      closed: 0,
      timedOut: 0,
    });
  });

  it('matches returns by messageId when the same id is published twice at once', async () => {
    const twice = envelope('o-twice');
    const results = await Promise.allSettled([
      publishEnvelope(publisher, twice, routes['order.OrderArchived'], { prefix: broker.prefix }),
      publishEnvelope(publisher, twice, routes['order.OrderCreated'], { prefix: broker.prefix }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    // The other way round: the return names its exchange and routing key, so it fails the right publish.
    const reversed = await Promise.allSettled([
      publishEnvelope(publisher, twice, routes['order.OrderCreated'], { prefix: broker.prefix }),
      publishEnvelope(publisher, twice, routes['order.OrderArchived'], { prefix: broker.prefix }),
    ]);
    expect(reversed.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
  });

  it('rejects a publish the broker nacks (queue full with reject-publish) with PublishNackedError', async () => {
    const full = `${broker.prefix}full`;
    await broker.channel.assertQueue(full, {
      durable: true,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    broker.track('queue', full);
    await broker.channel.bindQueue(full, `${broker.prefix}order`, 'order.full');
    const route = { exchange: 'order', routingKey: 'order.full' };
    await publishEnvelope(publisher, envelope('o-fits'), route, { prefix: broker.prefix });
    const refused = envelope('o-refused');
    const error = await publishEnvelope(publisher, refused, route, { prefix: broker.prefix }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PublishNackedError);
    expect((error as PublishNackedError).messageId).toBe(refused.messageId);
    expect((error as PublishNackedError).retryable).toBe(true);
    expect((await broker.channel.checkQueue(full)).messageCount).toBe(1);
    expect(publisher.stats).toEqual({
      confirmed: 1,
      returned: 0,
      nacked: 1,
      closed: 0,
      timedOut: 0,
    });
  });

  it('fails pending publishes when the channel closes and works again on a fresh channel', async () => {
    const missing = `${broker.prefix}no-such-exchange`;
    const failed = publisher.publish(missing, 'x', Buffer.from('{}'), { messageId: 'm-missing' });
    await expect(failed).rejects.toBeInstanceOf(ChannelClosedError);
    await publishEnvelope(publisher, envelope('o-after'), routes['order.OrderCreated'], {
      prefix: broker.prefix,
    });
    const delivered = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.queue,
    );
    expect(delivered).toHaveLength(1);
    expect(publisher.stats).toEqual({
      confirmed: 1,
      returned: 0,
      nacked: 0,
      closed: 1,
      timedOut: 0,
    });
  });

  it('waits for drain under back-pressure and confirms every message', async () => {
    const small = new ConfirmedPublisher(broker.connection, {
      channelOptions: { highWaterMark: 2 },
    });
    const body = Buffer.alloc(8 * 1024, 'x');
    const count = 200;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        small.publish(`${broker.prefix}order`, 'order.created', body, {
          messageId: `bp-${i}`,
          contentType: 'application/octet-stream',
        }),
      ),
    );
    expect(small.drainWaits).toBeGreaterThan(0);
    const check = await broker.channel.checkQueue(topology.consumers['inventory-service']!.queue);
    expect(check.messageCount).toBe(count);
    await small.close();
  });

  it('publishes again after the broker closed its connection, on a new one (connector source)', async () => {
    const connectionName = `evgen-test-publisher-${broker.prefix}`;
    const connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL,
      connectionName,
      backoff: { baseMs: 20, capMs: 200 },
    });
    const resilient = new ConfirmedPublisher(connector);
    try {
      const queue = topology.consumers['inventory-service']!.queue;
      await publishEnvelope(resilient, envelope('o-first'), routes['order.OrderCreated'], {
        prefix: broker.prefix,
      });
      expect(await closeConnectionFromBroker(connectionName)).toBe(1);
      const after = envelope('o-after-close');
      await waitFor('a publish on the new connection', () =>
        publishEnvelope(resilient, after, routes['order.OrderCreated'], {
          prefix: broker.prefix,
        }).then(
          () => true,
          (error: unknown) => {
            expect(error).toBeInstanceOf(ChannelClosedError);
            return undefined;
          },
        ),
      );
      const ids = (await drainQueue(broker.channel, queue)).map((m) => m.properties.messageId);
      expect(ids.length).toBeGreaterThanOrEqual(2);
      expect(ids).toContain(after.messageId);
    } finally {
      await resilient.close();
      await connector.close();
    }
  });

  it('refuses a publish without messageId (returns could not be matched)', async () => {
    await expect(
      publisher.publish(`${broker.prefix}order`, 'order.created', Buffer.from('{}'), {
        messageId: '',
      }),
    ).rejects.toBeInstanceOf(TypeError);
  });
});

describe('rabbitRelayPublisher', () => {
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let publisher: ConfirmedPublisher;

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100] });
    publisher = new ConfirmedPublisher(broker.connection);
  });
  afterEach(async () => {
    await publisher.close();
    await broker.cleanup();
  });

  it('routes outbox messages by event type and carries the row headers', async () => {
    const relay = rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix });
    const sent = envelope('o-relay');
    await relay.publish({
      outboxId: '1',
      envelope: sent,
      headers: { traceparent: 't' },
      attempts: 0,
    });
    const [message] = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.queue,
    );
    expect(message!.properties.messageId).toBe(sent.messageId);
    expect(message!.fields.routingKey).toBe('order.created');
    expect(message!.properties.headers!.traceparent).toBe('t');
  });

  it('rejects an event type without a route, and an unroutable one', async () => {
    const relay = rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix });
    const unknown = { ...envelope('o-x'), eventType: 'order.Nope' };
    await expect(
      relay.publish({ outboxId: '2', envelope: unknown, headers: {}, attempts: 0 }),
    ).rejects.toBeInstanceOf(UnknownEventError);
    const archived = { ...envelope('o-y'), eventType: 'order.OrderArchived' };
    await expect(
      relay.publish({ outboxId: '3', envelope: archived, headers: {}, attempts: 0 }),
    ).rejects.toBeInstanceOf(UnroutableError);
  });
});

/**
 * A confirm channel that confirms only when the test says so: the broker's silence (a blocked
 * connection, a lost confirm) cannot be provoked on the shared broker without changing its
 * settings, so the timeout logic is checked against this fake.
 */
class SilentChannel extends EventEmitter {
  readonly published: {
    messageId: string;
    exchange: string;
    routingKey: string;
    confirm: (error: unknown) => void;
  }[] = [];
  /** What publish() returns: false reports back-pressure (the caller must wait for 'drain'). */
  writable = true;

  publish(
    exchange: string,
    routingKey: string,
    _content: Buffer,
    options: { messageId: string },
    callback: (error: unknown) => void,
  ): boolean {
    this.published.push({ messageId: options.messageId, exchange, routingKey, confirm: callback });
    return this.writable;
  }

  /** The broker returns the message as unroutable (it sends the return before the ack). */
  returnMessage(messageId: string, exchange: string, routingKey: string): void {
    this.emit('return', {
      properties: { messageId },
      fields: { replyCode: 312, replyText: 'NO_ROUTE', exchange, routingKey },
      content: Buffer.alloc(0),
    });
  }

  async waitForConfirms(): Promise<void> {}
  async close(): Promise<void> {}
}

/** Lets promise callbacks and I/O run without moving the (fake) clock, until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 100) throw new Error('condition not reached');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('ConfirmedPublisher confirm timeout (fake channel)', () => {
  let channel: SilentChannel;
  const connection = () =>
    ({ createConfirmChannel: async () => channel }) as unknown as ChannelModel;
  const properties = (messageId: string) => ({ messageId, contentType: 'application/json' });
  const body = Buffer.from('{}');

  beforeEach(() => {
    channel = new SilentChannel();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects a publish not confirmed within confirmTimeoutMs with a retryable PublishTimeoutError', async () => {
    const publisher = new ConfirmedPublisher(connection(), { confirmTimeoutMs: 1_000 });
    const outcome = publisher.publish('order', 'order.created', body, properties('m-1')).then(
      () => 'confirmed',
      (error: unknown) => error,
    );
    await until(() => channel.published.length === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(publisher.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(PublishTimeoutError);
    expect(error).toMatchObject({
      messageId: 'm-1',
      exchange: 'order',
      routingKey: 'order.created',
      timeoutMs: 1_000,
      retryable: true,
    });
    expect((error as Error).message).toBe(
      "broker did not confirm message m-1 to exchange 'order' with routing key 'order.created' within 1000 ms",
    );
    expect(classifyError(error)).toBe('retryable');
    expect(publisher.inFlight).toBe(0);
    expect(publisher.stats).toEqual({
      confirmed: 0,
      returned: 0,
      nacked: 0,
      closed: 0,
      timedOut: 1,
    });

    // The ack comes after all: ignored, nothing counted, nothing thrown.
    channel.published[0]!.confirm(null);
    expect(publisher.stats).toEqual({
      confirmed: 0,
      returned: 0,
      nacked: 0,
      closed: 0,
      timedOut: 1,
    });
    // The channel is still good for the next publish.
    const next = publisher.publish('order', 'order.created', body, properties('m-2'));
    await until(() => channel.published.length === 2);
    channel.published[1]!.confirm(null);
    await expect(next).resolves.toBeUndefined();
    expect(publisher.stats).toMatchObject({ confirmed: 1, timedOut: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a timed-out publish's late return is not taken for the retry of the same message", async () => {
    const publisher = new ConfirmedPublisher(connection(), { confirmTimeoutMs: 1_000 });
    const first = publisher.publish('order', 'order.created', body, properties('m-1'));
    const firstFailed = expect(first).rejects.toBeInstanceOf(PublishTimeoutError);
    await until(() => channel.published.length === 1);
    await vi.advanceTimersByTimeAsync(1_000);
    await firstFailed;
    // The retry of the same messageId on the same route, while the first is still at the broker.
    const retry = publisher.publish('order', 'order.created', body, properties('m-1'));
    await until(() => channel.published.length === 2);
    // The broker answers the first copy late (returned, then acked), then confirms the retry.
    channel.returnMessage('m-1', 'order', 'order.created');
    channel.published[0]!.confirm(null);
    channel.published[1]!.confirm(null);
    await expect(retry).resolves.toBeUndefined();
    expect(publisher.stats).toEqual({
      confirmed: 1,
      returned: 0,
      nacked: 0,
      closed: 0,
      timedOut: 1,
    });
  });

  it('bounds the wait for drain too: a publish that cannot even be written times out and is never sent', async () => {
    const publisher = new ConfirmedPublisher(connection(), { confirmTimeoutMs: 1_000 });
    channel.writable = false;
    const first = publisher.publish('order', 'order.created', body, properties('m-1'));
    const firstFailed = expect(first).rejects.toBeInstanceOf(PublishTimeoutError);
    await until(() => channel.published.length === 1);
    // The socket buffer is full and never drains: m-2 waits for 'drain'.
    const second = publisher.publish('order', 'order.created', body, properties('m-2'));
    const secondFailed = expect(second).rejects.toBeInstanceOf(PublishTimeoutError);
    await vi.advanceTimersByTimeAsync(1_000);
    await firstFailed;
    await secondFailed;
    expect(channel.published.map((p) => p.messageId)).toEqual(['m-1']);
    expect(publisher.stats.timedOut).toBe(2);
  });

  it('refuses a confirmTimeoutMs that is not a positive number', () => {
    expect(() => new ConfirmedPublisher(connection(), { confirmTimeoutMs: 0 })).toThrow(
      /confirmTimeoutMs must be a positive number/,
    );
    expect(() => new ConfirmedPublisher(connection(), { confirmTimeoutMs: Number.NaN })).toThrow(
      RangeError,
    );
  });
});
