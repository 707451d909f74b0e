/**
 * Starts (or reuses) the shared test broker: `npx tsx test/support/kafka/start.ts`.
 * Prints the bootstrap address and the PID; `stop.ts` stops exactly that PID.
 */
import { ensureSharedKafkaBroker } from './broker.js';

const broker = await ensureSharedKafkaBroker();
process.stdout.write(
  `kafka ${broker.started ? 'started' : 'already running'} at ${broker.brokers}` +
    ` (pid ${broker.pid ?? 'unknown: not started by this script'}, data ${broker.dataDir})\n`,
);
