/**
 * Apicurio's JSON Schema serde for Kafka (Java, Maven Central), run by the interop tests against
 * the real broker and the real registry — a reader and writer of Confluent's framing nobody here
 * wrote, in the language most Kafka shops consume with.
 *
 * - The jars (`java-serde-pom.xml`: apicurio-registry-jsonschema-serde-kafka 3.1.7, why not 3.0.9
 *   is said there) are fetched once with mvn into a cache folder outside the repository
 *   (`$EVGEN_APICURIO_SERDE_CACHE`, default `~/.cache/evgen/apicurio-serde-3.1.7`), like the
 *   broker's and the Connect worker's.
 * - test/registry/java/ApicurioSerde.java is compiled with javac into `classes-<hash of the
 *   source>/` there, so an edited program is rebuilt and an unchanged one is not.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJavaProgram, fetchMavenJars, runJavaProgram } from '../maven-jars.js';
import { TEST_REGISTRY_URL } from './apicurio.js';

export const APICURIO_SERDE_VERSION = '3.1.7';

const POM = fileURLToPath(new URL('./java-serde-pom.xml', import.meta.url));
const SOURCE = fileURLToPath(new URL('../../registry/java/ApicurioSerde.java', import.meta.url));

/**
 * The registry's own (v3) API, which the serde speaks; the same registry as TEST_REGISTRY_URL,
 * whose Confluent API evgen pushes through.
 */
export const SERDE_REGISTRY_URL = TEST_REGISTRY_URL.replace(
  /\/apis\/ccompat\/v7\/?$/,
  '/apis/registry/v3',
);

/**
 * The Apicurio group of a subject registered through the Confluent API: Confluent subjects have
 * no group, Apicurio files them under `default`.
 */
export const CCOMPAT_GROUP = 'default';

function cacheDir(): string {
  return (
    process.env.EVGEN_APICURIO_SERDE_CACHE ??
    join(homedir(), '.cache', 'evgen', `apicurio-serde-${APICURIO_SERDE_VERSION}`)
  );
}

/** Fetches the jars and compiles the program (each once); returns the class path. */
export function ensureApicurioSerde(): string {
  const cache = cacheDir();
  const libs = fetchMavenJars(
    POM,
    join(cache, 'libs'),
    [`apicurio-registry-jsonschema-serde-kafka-${APICURIO_SERDE_VERSION}.jar`],
    `Apicurio's serde ${APICURIO_SERDE_VERSION}`,
  );
  const classes = compileJavaProgram(SOURCE, `${libs}/*`, cache);
  return `${classes}:${libs}/*`;
}

/** Runs ApicurioSerde with `args`, `input` on its standard input; its standard output. */
export function runApicurioSerde(args: readonly string[], input = ''): Promise<string> {
  return runJavaProgram(ensureApicurioSerde(), 'ApicurioSerde', args, input);
}

/** One line of ApicurioSerde's output, split on tabs. */
export function serdeLines(output: string): string[][] {
  return output
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}
