/**
 * Starts (or reuses) the shared test broker: `npx tsx test/support/pulsar/start.ts`. It stays up
 * until `stop.ts`, or until the last vitest run using it ends (unless `EVGEN_PULSAR_KEEP=1`). Prints the URLs,
 * the PID and how long the start took.
 */
import { ensureSharedPulsarBroker } from './broker.js';

const broker = await ensureSharedPulsarBroker();
process.stdout.write(
  `pulsar ${broker.started ? `started in ${broker.startMs} ms` : 'already running'} at ${broker.serviceUrl} / ${broker.webUrl}` +
    ` (pid ${broker.pid ?? 'unknown: not started by this script'}, data ${broker.dataDir})\n`,
);
