/**
 * One Pulsar consumer runner in its own process, so a test can SIGKILL it: the effect oracle's
 * consumer (one effect row per handled message, through `ctx.inOrder`) with a fixed delay per
 * message, on the subscription the routes name. Prints `ready` once started; SIGTERM stops it
 * (prints `stopped`). Dead letters and errors are printed too.
 *
 * argv: webServiceUrl databaseUrl schema routesJson handlerDelayMs
 */
import pg from 'pg';
import { postgresDatabase } from '../../../src/runtime/db/database.js';
import { createPulsarConsumerRunner } from '../../../src/runtime/pulsar/consumer/pulsar-consumer-runner.js';
import { pulsarWebSocketClient } from '../../../src/runtime/pulsar/websocket-client.js';
import { effectConsumer } from '../../support/effect-oracle.js';

const [webServiceUrl, databaseUrl, schema, routesJson, delay] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
pool.on('error', () => undefined);
const consumer = effectConsumer(postgresDatabase(pool), schema!, 'inventory-service');
const delayMs = Number(delay);
const runner = createPulsarConsumerRunner({
  client: pulsarWebSocketClient({ webServiceUrl: webServiceUrl! }),
  routes: JSON.parse(routesJson!),
  maxUnsettled: 20,
  handler: {
    name: consumer.name,
    async handle(raw, context) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return consumer.handle(raw, context);
    },
  },
  onEvent: (event) => {
    if (event.type === 'dead-lettered')
      process.stdout.write(`dead-lettered ${event.messageId} ${String(event.error)}\n`);
    if (event.type === 'error' || event.type === 'settle-failed')
      process.stdout.write(`${event.type} ${String(event.error).slice(0, 200)}\n`);
  },
});
await runner.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void runner.stop().finally(() => {
    process.stdout.write('stopped\n');
    process.exit(0);
  });
});
