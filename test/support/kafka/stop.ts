/**
 * Stops the shared test broker started by `start.ts`: `npx tsx test/support/kafka/stop.ts`.
 * Only the PID in its PID file is signalled, and only while that PID still runs `kafka.Kafka`.
 */
import { sharedKafkaDataDir, stopKafkaBroker } from './broker.js';

const stopped = await stopKafkaBroker(sharedKafkaDataDir());
process.stdout.write(stopped ? 'kafka stopped\n' : 'no kafka broker of ours was running\n');
