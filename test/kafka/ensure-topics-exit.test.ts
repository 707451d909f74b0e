/**
 * A program that sets up its topics as docs/guides/kafka.md shows (`ensureKafkaTopics(kafka)`) ends by
 * itself once done, with either adapter: the admin `ensureKafkaTopics` opens is closed again.
 * An admin the caller passes in stays open for the caller to use and close.
 */
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureKafkaTopics } from 'evgen/runtime';
import { resolveKafkaTopics } from '../../src/runtime/kafka/kafka-topology.js';
import { kafkaTopology } from '../../generated/kafka/topics.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  TEST_KAFKA_BROKERS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';

const child = fileURLToPath(new URL('./support/ensure-topics-child.ts', import.meta.url));

describe.each(KAFKA_CLIENTS)('ensureKafkaTopics and process exit: $name', ({ name, create }) => {
  let kafka: TestKafka | undefined;
  afterEach(async () => {
    await kafka?.cleanup();
    kafka = undefined;
  });

  it('a program using the snippet of docs/guides/kafka.md creates the topics and exits by itself', async () => {
    kafka = await createTestKafka(create);
    const expected = resolveKafkaTopics(kafkaTopology, { prefix: kafka.prefix }).map(
      (t) => t.topic,
    );
    for (const topic of expected) kafka.track('topic', topic);
    const process = spawnTypeScript(child, [name, TEST_KAFKA_BROKERS, kafka.prefix], 'ignore');
    let stdout = '';
    let stderr = '';
    process.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    process.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A left-open admin keeps the event loop alive for good; the test timeout catches that.
    const [code, signal] = (await once(process, 'exit')) as [number | null, string | null];
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(JSON.parse(stdout)).toEqual(expected);
    await waitFor('the created topics to be listed', () => listedUnder(kafka!, expected));
  });

  it('leaves an admin passed in open for the caller', async () => {
    kafka = await createTestKafka(create);
    const result = await ensureKafkaTopics(kafka.admin, kafkaTopology, { prefix: kafka.prefix });
    for (const topic of result.created) kafka.track('topic', topic);
    expect(result.created).toHaveLength(resolveKafkaTopics(kafkaTopology).length);
    // Still usable: once the broker lists the new topics, a second run finds every one present.
    await waitFor('the created topics to be listed', () => listedUnder(kafka!, result.created));
    const again = await ensureKafkaTopics(kafka.admin, kafkaTopology, { prefix: kafka.prefix });
    expect(again).toEqual({ created: [], existing: result.created });
  });
});

/** true once the broker lists exactly `topics` under the test's prefix (metadata settles late). */
async function listedUnder(kafka: TestKafka, topics: readonly string[]): Promise<true | undefined> {
  const listed = (await kafka.admin.listTopics()).filter((t) => t.startsWith(kafka.prefix));
  return JSON.stringify(listed) === JSON.stringify([...topics].sort()) ? true : undefined;
}
