/**
 * Broker-side numbers for one consumer (consumer lag, retries waiting, dead
 * letters), read with passive declarations: nothing is created or changed.
 */
import { currentConnection, type ConnectionSource } from './connector.js';
import type { ConsumerRoutes } from './topology.js';

export interface ConsumerQueueStats {
  /** Messages waiting in the work queue (not yet delivered): the consumer's lag. */
  readonly waiting: number;
  /** Consumers attached to the work queue. */
  readonly consumers: number;
  /** Retry copies waiting out their delay, all tiers together. */
  readonly retrying: number;
  /** Messages in the dead queue. */
  readonly dead: number;
}

/** Counts for `routes`' queues. Rejects (404) when one of them does not exist. */
export async function consumerQueueStats(
  connection: ConnectionSource,
  routes: ConsumerRoutes,
): Promise<ConsumerQueueStats> {
  const model = await currentConnection(connection);
  const channel = await model.createChannel();
  // A missing queue closes the channel; the awaited checkQueue rejects with the reason.
  channel.on('error', () => undefined);
  try {
    const work = await channel.checkQueue(routes.queue);
    let retrying = 0;
    for (const tier of routes.tiers)
      retrying += (await channel.checkQueue(tier.queue)).messageCount;
    const dead = await channel.checkQueue(routes.deadQueue);
    return {
      waiting: work.messageCount,
      consumers: work.consumerCount,
      retrying,
      dead: dead.messageCount,
    };
  } finally {
    await channel.close().catch(() => undefined);
  }
}
