/**
 * One member of a consumer group, in its own process so a test can SIGKILL it: the Kafka
 * consumer runner with the effect oracle's consumer (one effect row per handled message, plain or
 * through `ctx.inOrder`), a fixed delay per record. Prints `ready` once started; SIGTERM stops it
 * (prints `stopped in <ms>`). Dead letters, commit failures and client errors are printed too.
 *
 * argv: adapter brokers databaseUrl schema routesJson plain|ordered handlerDelayMs sessionTimeoutMs
 * clientId
 */
import pg from 'pg';
import { postgresDatabase } from '../../../src/runtime/db/database.js';
import { createKafkaConsumerRunner } from '../../../src/runtime/kafka/consumer/kafka-consumer-runner.js';
import { effectConsumer } from '../../support/effect-oracle.js';
import { KAFKA_CLIENTS } from '../../support/kafka/test-kafka.js';

const [adapter, brokers, databaseUrl, schema, routesJson, mode, delay, session, clientId] =
  process.argv.slice(2);
const client = KAFKA_CLIENTS.find((c) => c.name === adapter)!.create({
  brokers: [brokers!],
  clientId,
});
const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
pool.on('error', () => undefined);
const consumer = effectConsumer(postgresDatabase(pool), schema!, 'inventory-service', undefined, {
  ordered: mode === 'ordered',
});
const delayMs = Number(delay);
const runner = createKafkaConsumerRunner({
  handler: {
    name: consumer.name,
    async handle(raw) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return consumer.handle(raw);
    },
  },
  onEvent: (event) => {
    if (event.type === 'dead-lettered')
      process.stdout.write(`dead-lettered ${event.messageId} ${String(event.error)}\n`);
    if (event.type === 'commit-failed' || event.type === 'error')
      process.stdout.write(`${event.type} ${String(event.error).slice(0, 200)}\n`);
  },
  kafka: {
    client,
    routes: JSON.parse(routesJson!),
    sessionTimeoutMs: Number(session),
  },
});
await runner.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  const from = Date.now();
  void runner.stop().finally(() => {
    process.stdout.write(`stopped in ${Date.now() - from}\n`);
    process.exit(0);
  });
});
