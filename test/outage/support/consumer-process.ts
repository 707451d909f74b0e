/**
 * A consumer runner in its own process (the effect oracle's consumer), reaching the database
 * (PostgreSQL or MariaDB) and RabbitMQ through the outage suite's fault proxies. Runs until
 * killed (SIGKILL) or SIGTERM.
 * Usage: consumer-process.ts <database-url> <amqp-url> <schema> <queue-prefix> <poison-aggregate|-> [short|default]
 * `default` runs with the shipped reconnect and breaker backoff instead of short caps.
 */
import { createRabbitMqConsumerRunner, resolveTopology } from '../../../src/runtime/index.js';
import { effectConsumer } from '../../support/effect-oracle.js';
import { OUTAGE_TOPOLOGY, OUTAGE_TIERS } from './outage-topology.js';
import { childDatabase } from './child-database.js';

const [databaseUrl, amqpUrl, schema, prefix, poison, caps] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
const shortCaps = caps !== 'default';
const db = childDatabase(databaseUrl, 8);
const routes = resolveTopology(OUTAGE_TOPOLOGY, { prefix, tiers: OUTAGE_TIERS }).consumers[
  'inventory-service'
]!;
const runner = createRabbitMqConsumerRunner({
  handler: effectConsumer(db, schema, 'inventory-service', (payload) => payload.orderId === poison),
  ...(shortCaps ? { circuitBreaker: { backoff: { baseMs: 250, capMs: 2_000 } } } : {}),
  rabbitmq: {
    connection: amqpUrl,
    routes,
    ...(shortCaps ? { reconnectBackoff: { baseMs: 100, capMs: 1_000 } } : {}),
  },
});
await runner.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void runner.stop().finally(() => process.exit(0));
});
