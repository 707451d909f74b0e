/**
 * Stops the shared test broker and deletes its data: `npx tsx test/support/pulsar/stop.ts`.
 * Only the PID in its PID file is signalled, and only while that PID still runs the standalone
 * starter.
 */
import { stopSharedPulsarBroker } from './broker.js';

const stopped = await stopSharedPulsarBroker();
process.stdout.write(stopped ? 'pulsar stopped\n' : 'no pulsar broker of ours was running\n');
