/**
 * Declares a resolved topology idempotently. Re-declaring an identical object is a no-op for
 * RabbitMQ; a different one fails with PRECONDITION_FAILED, which closes the channel. Every
 * declaration therefore runs on a channel of its own making (a fresh one after each failure), so
 * the caller's channels and the connection survive, and all conflicts are reported together.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { TopologyConflictError, type TopologyConflict } from './errors.js';
import {
  resolveTopology,
  type RabbitTopology,
  type ResolvedTopology,
  type TopologyOptions,
} from './topology.js';

const PRECONDITION_FAILED = 406;

/** Reads RabbitMQ's `inequivalent arg 'x' for queue 'q' in vhost '/': received … but current is …`. */
export function parsePreconditionFailed(
  kind: 'exchange' | 'queue',
  name: string,
  error: unknown,
): TopologyConflict {
  const text = error instanceof Error ? error.message : String(error);
  const quoted = /with message "(.*)"\s*$/s.exec(text);
  const serverMessage = quoted?.[1] ?? text;
  const match =
    /inequivalent arg '([^']+)' for (exchange|queue) '(.*)' in vhost '[^']*':\s*(.*)$/s.exec(
      serverMessage,
    );
  return {
    kind: (match?.[2] as 'exchange' | 'queue' | undefined) ?? kind,
    name: match?.[3] ?? name,
    argument: match?.[1] ?? 'unknown',
    ...(match?.[4] ? { detail: match[4] } : {}),
    serverMessage,
  };
}

function isPreconditionFailed(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === PRECONDITION_FAILED
  );
}

/**
 * Resolves `topology` with `options` and declares its exchanges, queues and bindings on
 * `connection`. Resolves to what was declared; rejects with a TopologyConflictError naming every
 * object whose existing declaration differs, and the differing argument.
 */
export async function assertTopology(
  connection: ChannelModel,
  topology: RabbitTopology,
  options: TopologyOptions = {},
): Promise<ResolvedTopology> {
  const resolved = resolveTopology(topology, options);
  await declareResolvedTopology(connection, resolved);
  return resolved;
}

/** Declares an already resolved topology (see `assertTopology`). */
async function declareResolvedTopology(
  connection: ChannelModel,
  resolved: ResolvedTopology,
): Promise<void> {
  const conflicts: TopologyConflict[] = [];
  let channel: Channel | undefined;
  const fresh = async (): Promise<Channel> => {
    if (channel !== undefined) return channel;
    const opened = await connection.createChannel();
    // A failed declaration emits 'error' on the channel; the rejected promise reports it.
    opened.on('error', () => undefined);
    channel = opened;
    return opened;
  };
  const attempt = async (
    kind: 'exchange' | 'queue',
    name: string,
    declare: (ch: Channel) => Promise<unknown>,
  ) => {
    const ch = await fresh();
    try {
      await declare(ch);
    } catch (error) {
      channel = undefined;
      if (!isPreconditionFailed(error)) throw error;
      conflicts.push(parsePreconditionFailed(kind, name, error));
    }
  };
  try {
    for (const exchange of resolved.exchanges) {
      await attempt('exchange', exchange.name, (ch) =>
        ch.assertExchange(exchange.name, exchange.type, {
          durable: true,
          autoDelete: false,
          internal: false,
        }),
      );
    }
    for (const queue of resolved.queues) {
      await attempt('queue', queue.name, (ch) =>
        ch.assertQueue(queue.name, {
          durable: true,
          exclusive: false,
          autoDelete: false,
          arguments: { ...queue.arguments },
        }),
      );
    }
    if (conflicts.length > 0) throw new TopologyConflictError(conflicts);
    for (const binding of resolved.bindings) {
      const ch = await fresh();
      await ch.bindQueue(binding.queue, binding.exchange, binding.routingKey);
    }
  } finally {
    if (channel !== undefined) await channel.close().catch(() => undefined);
  }
}

/**
 * Deletes every exchange and queue of a resolved topology (tests and tear-down tooling). Queues
 * are deleted with their messages.
 */
export async function deleteResolvedTopology(
  connection: ChannelModel,
  resolved: ResolvedTopology,
): Promise<void> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    for (const queue of resolved.queues) await channel.deleteQueue(queue.name);
    for (const exchange of resolved.exchanges) await channel.deleteExchange(exchange.name);
  } finally {
    await channel.close().catch(() => undefined);
  }
}
