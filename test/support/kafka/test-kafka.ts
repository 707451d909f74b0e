/**
 * Test access to the real Kafka broker started by `global-setup.ts`. Every test works under its
 * own random topic prefix and group ids and deletes them afterwards; a broker that does not
 * answer fails the test loudly, never skips it.
 */
import { randomBytes } from 'node:crypto';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { platformaticClient } from 'evgen-runtime/platformatic-kafka';
import { type KafkaAdmin, type KafkaClient, type KafkaConnection } from 'evgen/runtime';
import { type KafkaTopicSpec } from '../../../src/runtime/kafka/kafka-client.js';
import { kafkaAnswers, TEST_KAFKA_BROKERS } from './broker.js';

export { TEST_KAFKA_BROKERS };

/** Every adapter of evgen's Kafka interface; tests loop over these. */
export const KAFKA_CLIENTS: readonly {
  readonly name: string;
  readonly create: (connection: KafkaConnection) => KafkaClient;
}[] = [
  { name: 'kafkajs', create: kafkajsClient },
  { name: 'platformatic', create: platformaticClient },
];

/** `evgen-t-1a2b3c4d.`: prepended to every topic and group a test creates. */
export function uniqueKafkaPrefix(): string {
  return `evgen-t-${randomBytes(4).toString('hex')}.`;
}

export interface TestKafka {
  readonly prefix: string;
  readonly brokers: string;
  readonly admin: KafkaAdmin;
  /** Creates prefixed topics (names given without the prefix) and remembers them for clean-up. */
  createTopics(topics: readonly KafkaTopicSpec[]): Promise<string[]>;
  /** Remembers already-prefixed topics / groups to delete at clean-up. */
  track(kind: 'topic' | 'group', name: string): void;
  /** A prefixed group id, deleted at clean-up. */
  group(name: string): string;
  cleanup(): Promise<void>;
}

/** Connects an admin of `client` to `brokers` (default: the shared test broker). */
export async function createTestKafka(
  client: (connection: KafkaConnection) => KafkaClient,
  brokers = TEST_KAFKA_BROKERS,
): Promise<TestKafka> {
  const [host, port] = brokers.split(':');
  if (!(await kafkaAnswers(host!, Number(port)))) {
    throw new Error(
      `Kafka is not reachable at ${brokers}: start it with npx tsx test/support/kafka/start.ts`,
    );
  }
  const prefix = uniqueKafkaPrefix();
  const admin = await client({ brokers: [brokers] }).admin();
  const topics = new Set<string>();
  const groups = new Set<string>();
  return {
    prefix,
    brokers,
    admin,
    async createTopics(specs) {
      const named = specs.map((spec) => ({ ...spec, topic: prefix + spec.topic }));
      for (const spec of named) topics.add(spec.topic);
      await admin.createTopics(named);
      return named.map((spec) => spec.topic);
    },
    track(kind, name) {
      (kind === 'topic' ? topics : groups).add(name);
    },
    group(name) {
      const id = prefix + name;
      groups.add(id);
      return id;
    },
    async cleanup() {
      try {
        // A group whose last member (a Java consumer, a killed child) has not left yet is
        // NON_EMPTY until its session times out: try again for a while before failing.
        for (let attempt = 1; ; attempt++) {
          try {
            await admin.deleteGroups([...groups]);
            break;
          } catch (error) {
            if (attempt >= 20) throw error;
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
        }
        await admin.deleteTopics([...topics]);
      } finally {
        await admin.close();
      }
    },
  };
}

export { waitFor } from '../wait-for.js';
