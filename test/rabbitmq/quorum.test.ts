/**
 * Quorum queues: the same retry path works on them (TTL tiers dead-letter back to the work
 * queue), and the broker's delivery limit sits above evgen's retry budget, so the broker never
 * drops a message that evgen would still retry.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  RetryableError,
  createRabbitMqConsumerRunner,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type ResolvedTopology,
} from 'evgen/runtime';
import {
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  createTestBroker,
  drainQueue,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

describe('quorum queues (real RabbitMQ)', () => {
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let runner: ConsumerRunner | undefined;

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200], queueType: 'quorum' });
    runner = undefined;
  });
  afterEach(async () => {
    await runner?.stop();
    await broker.cleanup();
  });

  it('declares the work queue with x-delivery-limit above the retry budget', () => {
    const work = topology.queues.find((q) => q.role === 'work')!;
    const routes = topology.consumers['inventory-service']!;
    expect(work.arguments['x-queue-type']).toBe('quorum');
    expect(work.arguments['x-delivery-limit']).toBeGreaterThan(routes.maxAttempts);
  });

  it('retries through quorum TTL tiers and handles the message once (runner owning its connection from a URL)', async () => {
    const events: ConsumerRunnerEvent[] = [];
    let calls = 0;
    runner = createRabbitMqConsumerRunner({
      handler: {
        name: 'inventory-service',
        async handle() {
          calls++;
          if (calls <= 2) throw new RetryableError('not yet');
          return 'handled';
        },
      },
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: TEST_RABBITMQ_URL,
        routes: topology.consumers['inventory-service']!,
      },
    });
    await runner.start();
    const publisher = new ConfirmedPublisher(broker.connection);
    const body = { messageId: 'q-1', eventType: 'order.OrderCreated', payload: {} };
    await publisher.publish(
      `${broker.prefix}order`,
      'order.created',
      Buffer.from(JSON.stringify(body)),
      { messageId: 'q-1' },
    );
    await publisher.close();
    await waitFor('handled', () => events.find((e) => e.type === 'handled'));
    expect(calls).toBe(3);
    expect(events.filter((e) => e.type === 'retried')).toHaveLength(2);
    expect(
      await drainQueue(broker.channel, topology.consumers['inventory-service']!.deadQueue),
    ).toHaveLength(0);
  });
});
