/**
 * vitest global setup: makes sure the shared schema registry (Apicurio, Confluent API) answers
 * before any test runs, starting it (and fetching it through Maven on a fresh machine) when it
 * does not. A registry that cannot be started fails the run loudly. It is left running for the
 * next run; `npx tsx test/support/registry/stop.ts` stops it.
 */
import { ensureSharedRegistry, TEST_REGISTRY_URL } from './apicurio.js';

export default async function setup(): Promise<void> {
  if (process.env.EVGEN_TEST_REGISTRY_URL !== undefined) return; // an external registry was given
  const registry = await ensureSharedRegistry();
  if (registry.started) {
    process.stdout.write(
      `registry: started Apicurio at ${TEST_REGISTRY_URL} (pid ${registry.pid})\n`,
    );
  }
}
