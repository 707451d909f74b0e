/**
 * A relay route naming an exchange the broker does not have (an event type deployed before its
 * topology was declared), on the real RabbitMQ and PostgreSQL (the scenario:
 * test/outbox/support/missing-destination.ts). RabbitMQ answers a publish to a missing exchange
 * by closing the channel, and every message in flight on it failed as a broker outage: nothing
 * at all was published until the exchange existed. Now the other event type's rows are published
 * at once, the missing exchange's rows fail on their own with RabbitExchangeMissingError (never as
 * an outage), are kept, and go out once it is declared.
 */
import { afterEach, describe, it } from 'vitest';
import {
  ConfirmedPublisher,
  createAmqpConnector,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  type OutboxRelay,
} from 'evgen-runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  createTestBroker,
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  type TestBroker,
} from '../support/rabbitmq.js';
import { runMissingDestinationScenario } from '../outbox/support/missing-destination.js';

describe('relay to an exchange the broker does not have', () => {
  let broker: TestBroker | undefined;
  let pg: TestSchema | undefined;
  let relay: OutboxRelay | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await relay?.stop();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await broker?.cleanup();
    await pg?.drop();
    relay = broker = pg = undefined;
  });

  it("fails only that exchange's rows, publishes the rest at once, and the held rows once it exists", async () => {
    const testBroker = (broker = await createTestBroker());
    await testBroker.declare(SAMPLE_TOPOLOGY);
    pg = await createTestSchema('evgen_missing_exchange');
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db);
    const connector = createAmqpConnector({ url: TEST_RABBITMQ_URL });
    closers.push(() => connector.close());
    const confirmed = new ConfirmedPublisher(connector);
    closers.push(() => confirmed.close());
    await runMissingDestinationScenario({
      db,
      publisher: rabbitRelayPublisher(
        confirmed,
        {
          'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' },
          'audit.OrderAudited': { exchange: 'audit', routingKey: 'audit' },
        },
        { prefix: testBroker.prefix },
      ),
      present: 'order.OrderCreated',
      missing: 'audit.OrderAudited',
      missingError: /RabbitExchangeMissingError: exchange '.*audit' does not exist/,
      // Declared with a bound queue, so the publishes are routable.
      async create() {
        const exchange = `${testBroker.prefix}audit`;
        const queue = `${testBroker.prefix}audit-q`;
        await testBroker.channel.assertExchange(exchange, 'topic', { durable: true });
        await testBroker.channel.assertQueue(queue, { durable: true });
        await testBroker.channel.bindQueue(queue, exchange, 'audit');
        testBroker.track('exchange', exchange);
        testBroker.track('queue', queue);
      },
      started: (started) => (relay = started),
    });
  });
});
