/**
 * An outbox relay in its own process, reaching the database (PostgreSQL or MariaDB) and RabbitMQ
 * through the outage suite's fault proxies. Runs until killed (SIGKILL) or SIGTERM.
 * Usage: relay-process.ts <database-url> <amqp-url> <schema> <prefix> [short|default]
 * `default` runs with the shipped backoff caps (relay 30 s, connector 5 s) instead of short ones.
 */
import { createOutboxRelay } from '../../../src/runtime/outbox/relay.js';
import { ConfirmedPublisher } from '../../../src/runtime/rabbitmq/confirmed-publisher.js';
import { createAmqpConnector } from '../../../src/runtime/rabbitmq/connector.js';
import { rabbitRelayPublisher } from '../../../src/runtime/rabbitmq/envelope-publishing.js';
import { childDatabase } from './child-database.js';

const [databaseUrl, amqpUrl, schema, prefix, caps] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
const shortCaps = caps !== 'default';
const connector = createAmqpConnector({
  url: amqpUrl,
  connectionName: 'evgen outage relay',
  ...(shortCaps ? { backoff: { baseMs: 100, capMs: 1_000 } } : {}),
});
const publisher = new ConfirmedPublisher(connector);
const relay = createOutboxRelay({
  db: childDatabase(databaseUrl, 4),
  schema,
  publisher: rabbitRelayPublisher(
    publisher,
    { 'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' } },
    { prefix },
  ),
  notifyChannel: false,
  pollIntervalMs: 200,
  ...(shortCaps ? { unavailableBackoff: { baseMs: 200, capMs: 2_000, jitter: 0.2 } } : {}),
});
await relay.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void relay.stop({ timeoutMs: 2_000 }).finally(() => process.exit(0));
});
