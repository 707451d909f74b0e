import { describe, expect, it } from 'vitest';
import { kafkaConsumerRoutes } from 'evgen/runtime';
import { kafkaTopology } from '../../generated/kafka/topics.js';

describe('kafkaConsumerRoutes (from the generated Kafka topology)', () => {
  it("gives a consumer's topics, retry tiers, dead-letter topic, group and strict event types", () => {
    expect(kafkaConsumerRoutes(kafkaTopology, 'inventory-service')).toEqual({
      consumer: 'inventory-service',
      groupId: 'inventory-service',
      topics: ['order.events'],
      retry: [
        { topic: 'inventory-service.retry.1s', delayMs: 1_000 },
        { topic: 'inventory-service.retry.10s', delayMs: 10_000 },
        { topic: 'inventory-service.retry.60s', delayMs: 60_000 },
      ],
      deadLetter: 'inventory-service.dlt',
      strictEventTypes: ['order.OrderCancelled'],
    });
  });

  it('applies a deployment prefix, other tiers, a group id and maxAttempts', () => {
    const routes = kafkaConsumerRoutes(kafkaTopology, 'shipping-service', {
      prefix: 'staging.',
      tiers: [250, 5_000],
      groupId: 'shipping',
      maxAttempts: 5,
    });
    expect(routes).toEqual({
      consumer: 'shipping-service',
      groupId: 'shipping',
      topics: ['staging.inventory.events', 'staging.order.events'],
      retry: [
        { topic: 'staging.shipping-service.retry.250ms', delayMs: 250 },
        { topic: 'staging.shipping-service.retry.5s', delayMs: 5_000 },
      ],
      deadLetter: 'staging.shipping-service.dlt',
      maxAttempts: 5,
    });
  });

  it('refuses a consumer the topology does not have, naming the ones it has', () => {
    expect(() => kafkaConsumerRoutes(kafkaTopology, 'billing')).toThrow(
      "the Kafka topology has no consumer 'billing' (consumers: inventory-service, shipping-service)",
    );
  });
});
