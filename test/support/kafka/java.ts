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
