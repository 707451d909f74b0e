/**
 * Test access to the machine's real RabbitMQ. Every test works under its own random name prefix
 * and deletes what it declared; a broker that is down fails the test loudly, never skips it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import {
  assertTopology,
  type EventVersionDescriptor,
  type RabbitTopology,
  type ResolvedTopology,
  type TopologyOptions,
} from 'evgen/runtime';
import { deleteResolvedTopology } from '../../src/runtime/rabbitmq/assert-topology.js';
import { waitFor as pollFor } from './wait-for.js';

export const TEST_RABBITMQ_URL =
  process.env.EVGEN_TEST_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** `evgen-t-1a2b3c4d.`: prepended to every exchange and queue a test declares. */
export function uniquePrefix(): string {
  return `evgen-t-${randomBytes(4).toString('hex')}.`;
}

/** A connection to the test broker, or a clear failure saying the broker is down. */
export async function connectTestBroker(connectionName?: string): Promise<ChannelModel> {
  try {
    const model = await amqp.connect(
      TEST_RABBITMQ_URL,
      connectionName ? { clientProperties: { connection_name: connectionName } } : {},
    );
    model.on('error', () => undefined);
    return model;
  } catch (error) {
    throw new Error(
      `RabbitMQ is not reachable at ${TEST_RABBITMQ_URL}: start it (rabbitmq-server -detached) — ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** The example catalog's shape, reduced: one domain exchange, one consumer of two events. */
export const SAMPLE_TOPOLOGY: RabbitTopology = {
  exchanges: ['order'],
  consumers: [
    {
      name: 'inventory-service',
      subscriptions: [
        { eventType: 'order.OrderCancelled', exchange: 'order', routingKey: 'order.cancelled' },
        { eventType: 'order.OrderCreated', exchange: 'order', routingKey: 'order.created' },
      ],
    },
  ],
};

/** A minimal OrderCreated v1 (any object payload with an orderId) routed like SAMPLE_TOPOLOGY's. */
export const SAMPLE_ORDER_CREATED: EventVersionDescriptor<
  'order.OrderCreated',
  1,
  { orderId: string }
> = {
  eventType: 'order.OrderCreated',
  schemaVersion: 1,
  aggregateType: 'Order',
  aggregateIdProperty: 'orderId',
  validatePayload: (payload) => ({ ok: true, value: payload as { orderId: string } }),
  readPayload: (payload) => ({ ok: true, value: payload as { orderId: string } }),
};

export interface TestBroker {
  readonly prefix: string;
  /** The test's admin connection (declarations, inspection). */
  readonly connection: ChannelModel;
  /** A channel on it for inspection (`get`, `checkQueue`). */
  readonly channel: Channel;
  /** Declares `topology` under the test prefix and remembers it for clean-up. */
  declare(
    topology: RabbitTopology,
    options?: Omit<TopologyOptions, 'prefix'>,
  ): Promise<ResolvedTopology>;
  /** Remembers a resolved topology (e.g. one whose declaration failed half-way) for clean-up. */
  trackResolved(resolved: ResolvedTopology): void;
  /** Remembers extra queues/exchanges (already prefixed) to delete at clean-up. */
  track(kind: 'queue' | 'exchange', name: string): void;
  /** Deletes everything declared or tracked and closes the connection. */
  cleanup(): Promise<void>;
}

export async function createTestBroker(): Promise<TestBroker> {
  const prefix = uniquePrefix();
  const connection = await connectTestBroker();
  let channel = await connection.createChannel();
  channel.on('error', () => undefined);
  const declared: ResolvedTopology[] = [];
  const extra: { kind: 'queue' | 'exchange'; name: string }[] = [];
  return {
    prefix,
    connection,
    get channel() {
      return channel;
    },
    async declare(topology, options = {}) {
      const resolved = await assertTopology(connection, topology, { ...options, prefix });
      declared.push(resolved);
      return resolved;
    },
    trackResolved(resolved) {
      declared.push(resolved);
    },
    track(kind, name) {
      extra.push({ kind, name });
    },
    async cleanup() {
      channel = await connection.createChannel();
      channel.on('error', () => undefined);
      for (const resolved of declared) await deleteResolvedTopology(connection, resolved);
      for (const item of extra) {
        if (item.kind === 'queue') await channel.deleteQueue(item.name);
        else await channel.deleteExchange(item.name);
      }
      await connection.close().catch(() => undefined);
    },
  };
}

/** Takes every message currently in `queue` (acking them). */
export async function drainQueue(channel: Channel, queue: string): Promise<GetMessage[]> {
  const messages: GetMessage[] = [];
  for (;;) {
    const message = await channel.get(queue, { noAck: true });
    if (message === false) return messages;
    messages.push(message);
  }
}

/** `waitFor` (wait-for.ts) with the RabbitMQ tests' bounds: 15 s, every 25 ms. */
export function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  return pollFor(what, check, timeoutMs, 25);
}

const run = promisify(execFile);

/**
 * Closes, from the broker side, every connection whose client-provided name is `connectionName`
 * (what a broker restart or an operator does to a client). Resolves to how many were closed.
 */
export async function closeConnectionFromBroker(connectionName: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    '-q',
    'list_connections',
    '--no-table-headers',
    'pid',
    'client_properties',
  ]);
  // Lines look like `<rabbit@host.1.2.0>\t[{"connection_name","evgen …"},…]`.
  const needle = `{"connection_name",${JSON.stringify(connectionName)}}`;
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => line.split('\t')[0]!.trim());
  for (const pid of pids)
    await run('rabbitmqctl', ['-q', 'close_connection', pid, 'evgen test: broker-side close']);
  return pids.length;
}
