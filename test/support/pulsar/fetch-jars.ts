/**
 * Fetches the Pulsar broker jars into the cache (Maven Central, once; ~200 MB):
 * `npx tsx test/support/pulsar/fetch-jars.ts`. CI runs it before the tests so a cold cache shows
 * as its own step rather than inside the first Pulsar test's setup.
 */
import { ensurePulsarJars } from './broker.js';

const began = Date.now();
const libs = ensurePulsarJars();
process.stdout.write(`pulsar jars in ${libs} (${Date.now() - began} ms)\n`);
