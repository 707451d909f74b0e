import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TopologyConflictError, assertTopology, resolveTopology } from 'evgen/runtime';
import { parsePreconditionFailed } from '../../src/runtime/rabbitmq/assert-topology.js';
import { tierForAttempt } from '../../src/runtime/rabbitmq/topology.js';
import { SAMPLE_TOPOLOGY, createTestBroker, type TestBroker } from '../support/rabbitmq.js';

describe('resolveTopology', () => {
  it('derives exchanges, queues, tiers and bindings per consumer', () => {
    const resolved = resolveTopology(SAMPLE_TOPOLOGY, { prefix: 'p.' });
    expect(resolved.exchanges).toEqual([
      { name: 'p.order', type: 'topic' },
      { name: 'p.inventory-service.retry', type: 'direct' },
    ]);
    expect(resolved.queues.map((q) => [q.name, q.role])).toEqual([
      ['p.inventory-service', 'work'],
      ['p.inventory-service.retry.1s', 'retry'],
      ['p.inventory-service.retry.10s', 'retry'],
      ['p.inventory-service.retry.60s', 'retry'],
      ['p.inventory-service.dead', 'dead'],
    ]);
    expect(resolved.queues[0]!.arguments).toEqual({
      'x-dead-letter-exchange': 'p.inventory-service.retry',
      'x-dead-letter-routing-key': 'dead',
    });
    // Expired retries go back to this consumer's queue only, through the default exchange.
    expect(resolved.queues[2]!.arguments).toEqual({
      'x-message-ttl': 10_000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'p.inventory-service',
    });
    expect(resolved.bindings).toEqual([
      { queue: 'p.inventory-service', exchange: 'p.order', routingKey: 'order.cancelled' },
      { queue: 'p.inventory-service', exchange: 'p.order', routingKey: 'order.created' },
      {
        queue: 'p.inventory-service.retry.1s',
        exchange: 'p.inventory-service.retry',
        routingKey: 'retry.1s',
      },
      {
        queue: 'p.inventory-service.retry.10s',
        exchange: 'p.inventory-service.retry',
        routingKey: 'retry.10s',
      },
      {
        queue: 'p.inventory-service.retry.60s',
        exchange: 'p.inventory-service.retry',
        routingKey: 'retry.60s',
      },
      {
        queue: 'p.inventory-service.dead',
        exchange: 'p.inventory-service.retry',
        routingKey: 'dead',
      },
    ]);
    const routes = resolved.consumers['inventory-service']!;
    expect(routes.maxAttempts).toBe(4);
    expect([1, 2, 3, 4, 9].map((attempt) => tierForAttempt(routes, attempt).delayMs)).toEqual([
      1000, 10_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('takes tiers and attempts at run time and validates them', () => {
    const resolved = resolveTopology(SAMPLE_TOPOLOGY, { tiers: [100, 250], maxAttempts: 5 });
    expect(resolved.consumers['inventory-service']!.tiers.map((t) => t.queue)).toEqual([
      'inventory-service.retry.100ms',
      'inventory-service.retry.250ms',
    ]);
    expect(resolved.consumers['inventory-service']!.maxAttempts).toBe(5);
    expect(() => resolveTopology(SAMPLE_TOPOLOGY, { tiers: [] })).toThrow(/at least one/);
    expect(() => resolveTopology(SAMPLE_TOPOLOGY, { tiers: [200, 100] })).toThrow(/ascending/);
    expect(() => resolveTopology(SAMPLE_TOPOLOGY, { tiers: [1.5] })).toThrow(/positive integer/);
  });

  it('sets a quorum delivery limit above the retry budget and refuses one that is not', () => {
    const resolved = resolveTopology(SAMPLE_TOPOLOGY, { queueType: 'quorum', maxAttempts: 4 });
    expect(resolved.queues[0]!.arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 14,
    });
    expect(resolved.queues.every((q) => q.arguments['x-queue-type'] === 'quorum')).toBe(true);
    expect(() =>
      resolveTopology(SAMPLE_TOPOLOGY, { queueType: 'quorum', maxAttempts: 4, deliveryLimit: 4 }),
    ).toThrow(/must exceed/);
  });
});

describe('parsePreconditionFailed', () => {
  it('names the object and the argument from the server message', () => {
    const error = new Error(
      `Operation failed: QueueDeclare; 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'a.retry.1s' in vhost '/': received '200' but current is '100'"`,
    );
    expect(parsePreconditionFailed('queue', 'fallback', error)).toEqual({
      kind: 'queue',
      name: 'a.retry.1s',
      argument: 'x-message-ttl',
      detail: "received '200' but current is '100'",
      serverMessage:
        "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'a.retry.1s' in vhost '/': received '200' but current is '100'",
    });
  });
});

describe('assertTopology (real RabbitMQ)', () => {
  let broker: TestBroker;
  beforeEach(async () => {
    broker = await createTestBroker();
  });
  afterEach(async () => {
    await broker.cleanup();
  });

  it('declares everything and is idempotent', async () => {
    const first = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    const again = await assertTopology(broker.connection, SAMPLE_TOPOLOGY, {
      prefix: broker.prefix,
      tiers: [100, 200],
    });
    expect(again).toEqual(first);
    for (const queue of first.queues) {
      const check = await broker.channel.checkQueue(queue.name);
      expect(check.queue).toBe(queue.name);
    }
    await broker.channel.checkExchange(`${broker.prefix}order`);
    await broker.channel.checkExchange(`${broker.prefix}inventory-service.retry`);
  });

  it('names an exchange whose type differs', async () => {
    const prefix = broker.prefix;
    const channel = await broker.connection.createChannel();
    await channel.assertExchange(`${prefix}order`, 'direct', { durable: true });
    await channel.close();
    broker.trackResolved(resolveTopology(SAMPLE_TOPOLOGY, { prefix, tiers: [100] }));
    const error = await assertTopology(broker.connection, SAMPLE_TOPOLOGY, {
      prefix,
      tiers: [100],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TopologyConflictError);
    expect(
      (error as TopologyConflictError).conflicts.map((c) => [c.kind, c.name, c.argument]),
    ).toEqual([['exchange', `${prefix}order`, 'type']]);
    expect((error as Error).message).toContain(
      `exchange '${prefix}order' already exists with a different 'type'`,
    );
    expect((error as Error).message).toContain("received 'topic' but current is 'direct'");
  });

  it('names the differing TTL of a retry tier queue', async () => {
    const prefix = broker.prefix;
    const channel = await broker.connection.createChannel();
    await channel.assertQueue(`${prefix}inventory-service.retry.1s`, {
      durable: true,
      arguments: { 'x-message-ttl': 5 },
    });
    await channel.close();
    broker.trackResolved(resolveTopology(SAMPLE_TOPOLOGY, { prefix, tiers: [1000] }));
    const error = await assertTopology(broker.connection, SAMPLE_TOPOLOGY, {
      prefix,
      tiers: [1000],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TopologyConflictError);
    const [only, ...rest] = (error as TopologyConflictError).conflicts;
    expect(rest).toHaveLength(0);
    expect(only).toMatchObject({
      kind: 'queue',
      name: `${prefix}inventory-service.retry.1s`,
      argument: 'x-message-ttl',
    });
    expect(only!.detail).toMatch(/1000/);
  });

  it('reports every conflicting queue at once, and the connection survives', async () => {
    const prefix = broker.prefix;
    await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100, 200] });
    const error = await assertTopology(broker.connection, SAMPLE_TOPOLOGY, {
      prefix,
      tiers: [100, 200],
      queueType: 'quorum',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TopologyConflictError);
    const conflicts = (error as TopologyConflictError).conflicts;
    expect(conflicts.map((c) => c.name)).toEqual([
      `${prefix}inventory-service`,
      `${prefix}inventory-service.retry.100ms`,
      `${prefix}inventory-service.retry.200ms`,
      `${prefix}inventory-service.dead`,
    ]);
    expect(conflicts.every((c) => c.kind === 'queue' && c.argument !== 'unknown')).toBe(true);
    const after = await broker.connection.createChannel();
    await after.checkQueue(`${prefix}inventory-service`);
    await after.close();
  });

  it('declares quorum queues with a delivery limit on a fresh prefix', async () => {
    const resolved = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100], queueType: 'quorum' });
    const check = await broker.channel.checkQueue(resolved.consumers['inventory-service']!.queue);
    expect(check.messageCount).toBe(0);
  });
});
