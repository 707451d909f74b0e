/**
 * Apache Pulsar's own Java client (`org.apache.pulsar:pulsar-client` 4.2.4, Maven Central), run by
 * the interop tests against the shared test broker: a reader and writer of Pulsar messages nobody
 * here wrote, in the language of the broker's own tools.
 *
 * - The jars (`java-client-pom.xml`, ~47 MB) are fetched once with mvn into a cache folder outside
 *   the repository (`$EVGEN_PULSAR_JAVA_CLIENT_CACHE`, default
 *   `~/.cache/evgen/pulsar-java-client-4.2.4`), like the broker's.
 * - test/pulsar/java/PulsarInterop.java is compiled with javac into `classes-<hash of the
 *   source>/` there, so an edited program is rebuilt and an unchanged one is not.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJavaProgram, fetchMavenJars, runJavaProgram } from '../maven-jars.js';
import { PULSAR_VERSION } from './broker.js';

const POM = fileURLToPath(new URL('./java-client-pom.xml', import.meta.url));
const SOURCE = fileURLToPath(new URL('../../pulsar/java/PulsarInterop.java', import.meta.url));

function cacheDir(): string {
  return (
    process.env.EVGEN_PULSAR_JAVA_CLIENT_CACHE ??
    join(homedir(), '.cache', 'evgen', `pulsar-java-client-${PULSAR_VERSION}`)
  );
}

/** Fetches the jars and compiles the program (each once); returns the class path. */
export function ensurePulsarJavaClient(): string {
  const cache = cacheDir();
  const libs = fetchMavenJars(
    POM,
    join(cache, 'libs'),
    [`pulsar-client-${PULSAR_VERSION}.jar`, `pulsar-client-api-${PULSAR_VERSION}.jar`],
    `Pulsar's Java client ${PULSAR_VERSION}`,
  );
  const classes = compileJavaProgram(SOURCE, `${libs}/*`, cache);
  return `${classes}:${libs}/*`;
}

/** Runs PulsarInterop with `args`, `input` on its standard input; its standard output. */
export function runPulsarInterop(args: readonly string[], input = ''): Promise<string> {
  return runJavaProgram(ensurePulsarJavaClient(), 'PulsarInterop', args, input);
}

/** One message as PulsarInterop's `consume` prints it. */
export interface JavaReadMessage {
  /** The partition's topic name on a partitioned topic. */
  readonly topic: string;
  readonly messageId: string;
  /** null when the message has no key. */
  readonly key: string | null;
  readonly payload: Buffer;
  readonly properties: Record<string, string>;
}

/** Parses `consume`'s output: tab-separated fields, base64 key, payload and property values. */
export function parseJavaReadMessages(output: string): JavaReadMessage[] {
  const text = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [topic, messageId, key, payload, ...properties] = line.split('\t');
      return {
        topic: topic!,
        messageId: messageId!,
        key: key === '-' ? null : text(key!),
        payload: Buffer.from(payload!, 'base64'),
        properties: Object.fromEntries(
          properties.map((p) => [p.slice(0, p.indexOf('=')), text(p.slice(p.indexOf('=') + 1))]),
        ),
      };
    });
}

/** One message for PulsarInterop's `produce`: a line of its standard input. */
export function javaProduceLine(message: {
  readonly key: string;
  readonly payload: Buffer;
  readonly properties?: Readonly<Record<string, string>> | undefined;
}): string {
  const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');
  return [
    b64(message.key),
    b64(message.payload),
    ...Object.entries(message.properties ?? {}).map(([name, value]) => `${name}=${b64(value)}`),
  ].join('\t');
}
