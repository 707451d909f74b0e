/**
 * The RabbitMQ series that come from the broker rather than from a handler, each made to change
 * by its cause on the real broker and read back from the Prometheus text:
 *   - a publish returned as unroutable (mandatory, no queue bound) counts as a confirm failure
 *     with reason `returned`, a routed one as confirmed;
 *   - a delivery nacked with requeue comes back flagged `redelivered` and is counted once;
 *   - the queue depths read from the operator's side: ready messages in the work queue before the
 *     consumer runs, a dead letter raising the dead queue's depth, the consumers attached, and a
 *     queue that does not exist reported as the source being down (no made-up zero).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  NonRetryableError,
  UnroutableError,
  createEnvelope,
  createPrometheusMetrics,
  createRabbitMqConsumerRunner,
  publishEnvelope,
  rabbitMqQueueDepths,
  type ConsumerRunner,
  type MessageHandler,
  type PrometheusMetrics,
} from 'evgen/runtime';
import {
  SAMPLE_ORDER_CREATED,
  SAMPLE_TOPOLOGY,
  createTestBroker,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';
import { parsePrometheusText, valueOf, type Sample } from './support/prometheus-text.js';

const ROUTE = { exchange: 'order', routingKey: 'order.created' };

describe('RabbitMQ broker-side metrics (real broker)', () => {
  let broker: TestBroker;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    broker = await createTestBroker();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await broker.cleanup();
  });

  const read = async (metrics: PrometheusMetrics): Promise<Sample[]> =>
    parsePrometheusText(await metrics.text());

  it('counts a returned mandatory message as a confirm failure (reason returned), a routed one as confirmed', async () => {
    await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200] });
    const metrics = createPrometheusMetrics();
    const publisher = new ConfirmedPublisher(broker.connection);
    cleanups.push(() => publisher.close());
    metrics.watchPublisher(publisher, 'orders');
    const failures = (s: Sample[], reason: string) =>
      valueOf(s, 'evgen_rabbitmq_publish_confirm_failures_total', { publisher: 'orders', reason });
    const confirmed = (s: Sample[]) =>
      valueOf(s, 'evgen_rabbitmq_publish_confirmed_total', { publisher: 'orders' });

    const before = await read(metrics);
    expect(confirmed(before)).toBe(0);
    expect(failures(before, 'returned')).toBe(0);

    const envelope = () => createEnvelope(SAMPLE_ORDER_CREATED, { orderId: 'o-1' }, {});
    await publishEnvelope(publisher, envelope(), ROUTE, { prefix: broker.prefix });
    const routed = await read(metrics);
    expect(confirmed(routed)).toBe(1);
    expect(failures(routed, 'returned')).toBe(0);

    // No queue is bound for this routing key: the broker confirms it and returns it.
    await expect(
      publishEnvelope(
        publisher,
        envelope(),
        { exchange: 'order', routingKey: 'order.nobody-listens' },
        { prefix: broker.prefix },
      ),
    ).rejects.toBeInstanceOf(UnroutableError);
    const returned = await read(metrics);
    expect(failures(returned, 'returned')).toBe(1);
    expect(confirmed(returned)).toBe(1);
    for (const reason of ['nacked', 'closed', 'timed_out'])
      expect(failures(returned, reason)).toBe(0);
  });

  it('counts a nack-requeued delivery as redelivered, and reads ready, dead-letter and consumer counts from the broker', async () => {
    const topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200] });
    const routes = topology.consumers['inventory-service']!;
    const metrics = createPrometheusMetrics();
    metrics.watchQueueDepths(rabbitMqQueueDepths(broker.connection, routes));
    // The same consumer's routes with a dead queue that does not exist: the read fails.
    metrics.watchQueueDepths(
      rabbitMqQueueDepths(broker.connection, {
        ...routes,
        consumer: 'missing',
        deadQueue: `${broker.prefix}no-such-queue`,
      }),
    );
    const publisher = new ConfirmedPublisher(broker.connection);
    cleanups.push(() => publisher.close());
    const send = async (orderId: string) =>
      publishEnvelope(publisher, createEnvelope(SAMPLE_ORDER_CREATED, { orderId }, {}), ROUTE, {
        prefix: broker.prefix,
      });
    const depth = (s: Sample[], role: string) =>
      valueOf(s, 'evgen_queue_messages', { consumer: 'inventory-service', role });

    const empty = await read(metrics);
    expect(depth(empty, 'work')).toBe(0);
    expect(depth(empty, 'retry')).toBe(0);
    expect(depth(empty, 'dead_letter')).toBe(0);
    expect(valueOf(empty, 'evgen_queue_depth_up', { consumer: 'inventory-service' })).toBe(1);
    expect(valueOf(empty, 'evgen_queue_depth_up', { consumer: 'missing' })).toBe(0);
    expect(valueOf(empty, 'evgen_queue_messages', { consumer: 'missing' })).toBeUndefined();

    await send('o-1');
    await send('o-2');
    await send('poison');
    const waiting = await read(metrics);
    expect(depth(waiting, 'work')).toBe(3);
    expect(valueOf(waiting, 'evgen_queue_consumers', { queue: routes.queue })).toBe(0);

    // Another client takes the first message and nacks it with requeue: it goes back flagged.
    const taken = await broker.channel.get(routes.queue, { noAck: false });
    if (taken === false) throw new Error('expected a message in the work queue');
    expect(taken.fields.redelivered).toBe(false);
    broker.channel.nack(taken, false, true);
    await waitFor('the nacked message back in the queue', async () =>
      (await broker.channel.checkQueue(routes.queue)).messageCount === 3 ? true : undefined,
    );

    const handler: MessageHandler = {
      name: 'inventory-service',
      async handle(raw) {
        if ((raw as { payload: { orderId: string } }).payload.orderId === 'poison')
          throw new NonRetryableError('cannot reserve stock for this order');
        return 'handled';
      },
    };
    const runner: ConsumerRunner = createRabbitMqConsumerRunner({
      handler,
      rabbitmq: {
        connection: broker.connection,
        routes,
      },
    });
    cleanups.push(() => runner.stop());
    metrics.watchConsumer('inventory-service', runner);
    await runner.start();

    const settled = await waitFor(
      'two handled, one dead letter in the dead queue',
      async () => {
        const s = await read(metrics);
        // The dead letter reaches the dead queue before the runner counts it (it counts once
        // the copy is confirmed and the original acked): wait for both.
        return valueOf(s, 'evgen_consumer_handled_total', { consumer: 'inventory-service' }) ===
          2 &&
          depth(s, 'dead_letter') === 1 &&
          valueOf(s, 'evgen_consumer_dead_lettered_total', { consumer: 'inventory-service' }) === 1
          ? s
          : undefined;
      },
      20_000,
    );
    expect(
      valueOf(settled, 'evgen_consumer_redelivered_total', { consumer: 'inventory-service' }),
    ).toBe(1);
    expect(
      valueOf(settled, 'evgen_consumer_dead_lettered_total', { consumer: 'inventory-service' }),
    ).toBe(1);
    expect(depth(settled, 'work')).toBe(0);
    expect(valueOf(settled, 'evgen_queue_consumers', { queue: routes.queue })).toBe(1);
    expect(
      valueOf(settled, 'evgen_queue_messages', { queue: routes.deadQueue, role: 'dead_letter' }),
    ).toBe(1);
  });
});
