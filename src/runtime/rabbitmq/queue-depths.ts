/**
 * A consumer's RabbitMQ queues as a QueueDepthSource: the work queue, each retry tier's queue and
 * the dead queue, by passive declaration (`checkQueue`: nothing is created or changed). AMQP gives
 * the ready count and the consumer count only; unacked (delivered, not settled) messages need the
 * management plugin's HTTP API, which evgen does not require (the runner's `inFlight` and
 * `evgen_runner_in_flight` say how many this process holds).
 */
import type { QueueDepth, QueueDepthSource } from '../health/queue-depth.js';
import { currentConnection, type ConnectionSource } from './connector.js';
import type { ConsumerRoutes } from './topology.js';

export function rabbitMqQueueDepths(
  connection: ConnectionSource,
  routes: ConsumerRoutes,
): QueueDepthSource {
  const queues: { queue: string; role: QueueDepth['role'] }[] = [
    { queue: routes.queue, role: 'work' },
    ...routes.tiers.map((tier) => ({ queue: tier.queue, role: 'retry' as const })),
    { queue: routes.deadQueue, role: 'dead_letter' },
  ];
  return {
    consumer: routes.consumer,
    async depths() {
      const model = await currentConnection(connection);
      const channel = await model.createChannel();
      // A missing queue closes the channel; the awaited checkQueue rejects with the reason.
      channel.on('error', () => undefined);
      try {
        const result: QueueDepth[] = [];
        for (const { queue, role } of queues) {
          const reply = await channel.checkQueue(queue);
          result.push({
            queue,
            role,
            messages: reply.messageCount,
            consumers: reply.consumerCount,
          });
        }
        return result;
      } finally {
        await channel.close().catch(() => undefined);
      }
    },
  };
}
