/** The outage suite's topology: one domain exchange, one consumer, short delay tiers. */
import type { RabbitTopology } from '../../../src/runtime/rabbitmq/topology.js';

export const OUTAGE_TOPOLOGY: RabbitTopology = {
  exchanges: ['order'],
  consumers: [
    {
      name: 'inventory-service',
      subscriptions: [
        { eventType: 'order.OrderCreated', exchange: 'order', routingKey: 'order.created' },
      ],
    },
  ],
};

/** Retry tiers (ms): a poison message is dead after 3 attempts within about 1.5 s. */
export const OUTAGE_TIERS: readonly number[] = [300, 1_000];
