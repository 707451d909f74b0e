/**
 * Fetches Apicurio's Java serde jars and compiles test/registry/java/ApicurioSerde.java into their
 * cache (once; ~30 MB from Maven Central): `npx tsx test/support/registry/fetch-serde.ts`. CI runs
 * it before the tests so a cold cache shows as its own step, not inside a test's time.
 */
import { ensureApicurioSerde } from './java-serde.js';

const began = Date.now();
const classPath = ensureApicurioSerde();
process.stdout.write(`apicurio serde ready: ${classPath} (${Date.now() - began} ms)\n`);
