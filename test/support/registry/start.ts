/** Starts (or reuses) the shared test registry: `npx tsx test/support/registry/start.ts`. */
import { ensureSharedRegistry } from './apicurio.js';

const registry = await ensureSharedRegistry();
process.stdout.write(
  `registry ${registry.started ? 'started' : 'already running'} at ${registry.url}` +
    ` (pid ${registry.pid ?? 'unknown: not started by this script'})\n`,
);
