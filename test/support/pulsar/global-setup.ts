/**
 * vitest global setup: when the run includes a test file that uses the Pulsar broker (imports
 * from test/support/pulsar/ or the delivery suites' transports), makes sure the shared broker answers before any test runs,
 * starting it when it does not (fetching its jars through Maven on a fresh machine). A broker
 * that cannot be started fails the run loudly.
 *
 * Runs that use no Pulsar test do not pay its ~10 s start and ~300 MB. Each run that does holds a
 * lease; the teardown of the last one stops the broker and deletes its data, so a 300 MB JVM is
 * not left behind on a shared machine. `EVGEN_PULSAR_KEEP=1` leaves it running for the next run
 * (`npx tsx test/support/pulsar/stop.ts` stops it).
 */
import { readFileSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import {
  ensureSharedPulsarBroker,
  releasePulsarLease,
  sharedPulsarDataDir,
  takePulsarLease,
  TEST_PULSAR_WEB_URL,
} from './broker.js';

type Teardown = () => Promise<void>;

export default async function setup(project: TestProject): Promise<Teardown | undefined> {
  if (process.env.EVGEN_TEST_PULSAR_WEB_URL !== undefined) return undefined; // an external broker was given
  if (!(await runUsesPulsar(project))) return undefined;
  const dataDir = sharedPulsarDataDir();
  takePulsarLease(dataDir);
  const broker = await ensureSharedPulsarBroker();
  if (broker.started) {
    process.stdout.write(
      `pulsar: started the shared test broker at ${TEST_PULSAR_WEB_URL} (pid ${broker.pid}, ready in ${broker.startMs} ms)\n`,
    );
  }
  return async () => {
    if (process.env.EVGEN_PULSAR_KEEP === '1') return;
    if (await releasePulsarLease(dataDir))
      process.stdout.write('pulsar: stopped the shared test broker\n');
  };
}

/**
 * true when a test file this run selected imports the Pulsar test support, directly or through
 * the delivery suites' transports (test/delivery/support/transports.ts runs Pulsar among them).
 */
async function runUsesPulsar(project: TestProject): Promise<boolean> {
  // The CLI's file filters; vitest keeps them on the instance without a public getter.
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const specifications = await project.vitest.globTestSpecifications(filters);
  return specifications.some((specification) =>
    /support\/pulsar\/|support\/transports\.js/.test(readFileSync(specification.moduleId, 'utf8')),
  );
}
