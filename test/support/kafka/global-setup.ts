/**
 * vitest global setup: makes sure the shared Kafka broker answers before any test runs, starting
 * it (and fetching its jars through Maven on a fresh machine) when it does not. A broker that
 * cannot be started fails the whole run loudly. The broker is left running for the next run;
 * `npx tsx test/support/kafka/stop.ts` stops it.
 */
import { ensureSharedKafkaBroker, TEST_KAFKA_BROKERS } from './broker.js';

export default async function setup(): Promise<void> {
  if (process.env.EVGEN_TEST_KAFKA_BROKERS !== undefined) return; // an external broker was given
  const broker = await ensureSharedKafkaBroker();
  if (broker.started) {
    process.stdout.write(
      `kafka: started the shared test broker at ${TEST_KAFKA_BROKERS} (pid ${broker.pid})\n`,
    );
  }
}
