/**
 * Fetches Pulsar's Java client jars and compiles test/pulsar/java/PulsarInterop.java into their
 * cache (once; ~47 MB from Maven Central): `npx tsx test/support/pulsar/fetch-java-client.ts`. CI
 * runs it before the tests so a cold cache shows as its own step, not inside a test's time.
 */
import { ensurePulsarJavaClient } from './java-client.js';

const began = Date.now();
const classPath = ensurePulsarJavaClient();
process.stdout.write(`pulsar java client ready: ${classPath} (${Date.now() - began} ms)\n`);
