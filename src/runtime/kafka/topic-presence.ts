/**
 * Whether a topic exists, asked before the relay sends to it. A broker that does not create
 * topics itself (`auto.create.topics.enable=false`, the usual production setting) answers a send
 * to a missing topic only after the client's metadata retries; on the relay's one serial producer
 * that send held up every other event type's records, and timed out as if the broker were down.
 * So a record for a topic the broker does not have fails at once, on its own, as a retryable
 * failure of that row (`KafkaTopicMissingError`), and the rest keep going.
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

/** How long an answer "missing" is believed before the broker is asked again, ms. */
export const MISSING_TOPIC_RECHECK_MS = 5_000;

/**
 * Answers for `producer.topicExists`, remembered: a topic found is never asked about again, a
 * missing one again after MISSING_TOPIC_RECHECK_MS; one question per topic at a time.
 */
export class TopicPresence {
  private readonly found = new Set<string>();
  private readonly missingSince = new Map<string, number>();
  private readonly asking = new Map<string, Promise<void>>();

  constructor(
    private readonly topicExists: (topic: string) => Promise<boolean>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `true` when the topic is known to exist; else a promise that rejects when it does not. */
  require(topic: string): true | Promise<void> {
    if (this.found.has(topic)) return true;
    const since = this.missingSince.get(topic);
    if (since !== undefined && this.now() - since < MISSING_TOPIC_RECHECK_MS)
      return Promise.reject(new KafkaTopicMissingError(topic));
    let asked = this.asking.get(topic);
    if (asked === undefined) {
      asked = this.topicExists(topic)
        .then((exists) => {
          if (exists) {
            this.found.add(topic);
            this.missingSince.delete(topic);
          } else {
            this.missingSince.set(topic, this.now());
            throw new KafkaTopicMissingError(topic);
          }
        })
        .finally(() => this.asking.delete(topic));
      this.asking.set(topic, asked);
    }
    return asked;
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
