/**
 * A service in its own process for the graceful-shutdown test: an outbox relay publishing to
 * RabbitMQ and the effect oracle's inbox consumer (each message held ~15 ms before its inbox
 * transaction, so deliveries are in flight when the signal comes), wired with
 * `shutdownOnSignal`. Prints `ready`, then on exit one JSON line with the consumer's counts
 * and the shutdown's result.
 * Usage: shutdown-service.ts <database-url> <amqp-url> <schema> <prefix>
 */
import pg from 'pg';
import {
  ConfirmedPublisher,
  createAmqpConnector,
  createOutboxRelay,
  createRabbitMqConsumerRunner,
  postgresDatabase,
  rabbitRelayPublisher,
  resolveTopology,
  shutdownOnSignal,
  type MessageHandler,
} from '../../../src/runtime/index.js';
import { effectConsumer } from '../../support/effect-oracle.js';
import { SAMPLE_TOPOLOGY } from '../../support/rabbitmq.js';

const [databaseUrl, amqpUrl, schema, prefix] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
const db = postgresDatabase(pool);
const connector = createAmqpConnector({ url: amqpUrl, connectionName: 'evgen shutdown test' });
const publisher = new ConfirmedPublisher(connector);
const relay = createOutboxRelay({
  db,
  schema,
  publisher: rabbitRelayPublisher(
    publisher,
    { 'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' } },
    { prefix },
  ),
  notifyChannel: false,
  pollIntervalMs: 50,
  batchSize: 20,
});
const effects = effectConsumer(db, schema, 'inventory-service');
const slow: MessageHandler = {
  name: effects.name,
  subscribes: effects.subscribes,
  handle: async (raw, context) => {
    await new Promise((resolve) => setTimeout(resolve, 15));
    return effects.handle(raw, context);
  },
};
const routes = resolveTopology(SAMPLE_TOPOLOGY, { prefix, tiers: [200] }).consumers[
  'inventory-service'
]!;
const consumer = createRabbitMqConsumerRunner({
  handler: slow,
  rabbitmq: {
    connection: connector,
    routes,
    prefetch: 20,
  },
});
let inFlightAtSignal = -1;
shutdownOnSignal({
  consumers: [consumer],
  relays: [relay],
  close: [() => publisher.close(), () => connector.close(), () => pool.end()],
  timeoutMs: 10_000,
  onEvent(event) {
    if (event.type === 'shutdown-started') inFlightAtSignal = consumer.inFlight;
    if (event.type === 'shutdown-finished')
      process.stdout.write(
        `${JSON.stringify({ ...event, inFlightAtSignal, consumer: consumer.metrics(), relay: relay.metrics() })}\n`,
      );
  },
});
await consumer.start();
await relay.start();
process.stdout.write('ready\n');
