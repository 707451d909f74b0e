/**
 * A Kafka topic's existence, for the relay's publisher (../destination-presence.ts says why it
 * asks): the error for a missing topic, and the producer wrapper that answers `topicExists`.
 */
import type { KafkaAdmin, KafkaProducer } from './kafka-client.js';

/** The broker has no such topic (and does not create it): create it, e.g. with `ensureKafkaTopics`. */
export class KafkaTopicMissingError extends Error {
  override readonly name = 'KafkaTopicMissingError';
  /** Retried with the relay's backoff: the topic may be created meanwhile. */
  readonly retryable = true;
  constructor(readonly topic: string) {
    super(
      `topic '${topic}' does not exist on the broker, which does not create topics itself: create it (ensureKafkaTopics from generated/kafka/topics.ts); the row is retried with backoff, and other topics' records are not held up`,
    );
  }
}

/**
 * `producer` with `topicExists` answered from an admin's topic list (one metadata request; never
 * creates a topic). The admin is opened on first use and closed with the producer.
 */
export function withTopicLookup(
  producer: KafkaProducer,
  openAdmin: () => Promise<KafkaAdmin>,
): KafkaProducer {
  let admin: Promise<KafkaAdmin> | undefined;
  const adminOnce = () => {
    admin ??= openAdmin().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };
  return {
    send: (records) => producer.send(records),
    ...(producer.probe !== undefined ? { probe: () => producer.probe!() } : {}),
    partitionFor: (key, partitionCount) => producer.partitionFor(key, partitionCount),
    async topicExists(topic) {
      return (await (await adminOnce()).listTopics()).includes(topic);
    },
    async close() {
      const opened = admin;
      admin = undefined;
      await Promise.all([
        producer.close(),
        opened?.then(
          (a) => a.close(),
          () => undefined,
        ),
      ]);
    },
  };
}
