/**
 * Runs a single-file Java program from test/kafka/java/ against the Kafka jars fetched through
 * Maven (the broker's dependency set includes org.apache.kafka:kafka-clients), so tests can ask
 * the Java client itself.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureKafkaJars } from './broker.js';

const run = promisify(execFile);

export async function runJava(program: string, args: readonly string[]): Promise<string> {
  const source = fileURLToPath(new URL(`../../kafka/java/${program}.java`, import.meta.url));
  const libs = ensureKafkaJars();
  try {
    const { stdout } = await run('java', ['-cp', `${libs}/*`, source, ...args], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    });
    return stdout;
  } catch (error) {
    const failed = error as Error & { stderr?: string; stdout?: string };
    throw new Error(`java ${program} failed: ${failed.message}\n${failed.stderr ?? ''}`, {
      cause: error,
    });
  }
}

/** One record as test/kafka/java/InteropConsumer.java prints it. */
export interface InteropRecord {
  readonly partition: number;
  readonly offset: number;
  /** The partition Java's producer picks for the key (`BuiltInPartitioner.partitionForKey`). */
  readonly javaPartition: number;
  readonly key: string;
  readonly value: string;
  readonly headers: Record<string, string>;
}

/** Parses InteropConsumer's output: tab-separated fields, base64 key, value and header values. */
export function parseInteropRecords(output: string): InteropRecord[] {
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  return output
    .trimEnd()
    .split('\n')
    .map((line) => {
      const [partition, offset, javaPartition, key, value, ...headers] = line.split('\t');
      return {
        partition: Number(partition),
        offset: Number(offset),
        javaPartition: Number(javaPartition),
        key: decode(key!),
        value: decode(value!),
        headers: Object.fromEntries(
          headers.map((h) => [h.slice(0, h.indexOf('=')), decode(h.slice(h.indexOf('=') + 1))]),
        ),
      };
    });
}
