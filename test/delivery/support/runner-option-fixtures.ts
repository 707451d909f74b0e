/** The handler and RabbitMQ routes the runner-option tests resolve options around (no broker). */
import type { ConsumerRoutes, MessageHandler } from 'evgen/runtime';

export const handler: MessageHandler = {
  name: 'inventory-service',
  handle: () => Promise.resolve(),
};

export const rabbitRoutes: ConsumerRoutes = {
  consumer: 'inventory-service',
  queue: 'opts.inventory-service',
  retryExchange: 'opts.inventory-service.retry',
  deadQueue: 'opts.inventory-service.dead',
  deadRoutingKey: 'dead',
  tiers: [{ delayMs: 100, queue: 'opts.inventory-service.retry.100', routingKey: 'retry.100' }],
  maxAttempts: 2,
};
