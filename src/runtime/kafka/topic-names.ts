/**
 * Names of the topics each consumer owns besides the event topics it reads, in one place so the
 * generated topic list, `ensureKafkaTopics` and the consumer runner agree:
 *
 *   <prefix><consumer>.retry.<tier>   one topic per retry delay tier (`1s`, `10s`, `250ms`)
 *   <prefix><consumer>.dlt            the consumer's dead-letter topic
 *
 * Retry and dead-letter topics are per consumer (not per source topic), so a retry copy is only
 * seen by the consumer that failed it. Copies keep the original key, so they land in the
 * partition of the same number when the partition counts match (the generator gives them the
 * partition count of the largest subscribed topic).
 */

/** Default retry delay tiers in milliseconds, ascending (same as the RabbitMQ transport). */
export const DEFAULT_KAFKA_RETRY_TIERS_MS: readonly number[] = Object.freeze([
  1_000, 10_000, 60_000,
]);

/** Kafka's own limits on topic names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]+$/;
const MAX_TOPIC_LENGTH = 249;

/** `1000` → `1s`, `60000` → `60s`, `250` → `250ms`. */
export function kafkaTierLabel(delayMs: number): string {
  if (!Number.isInteger(delayMs) || delayMs <= 0) {
    throw new RangeError(`retry tier ${delayMs} must be a positive integer of milliseconds`);
  }
  return delayMs % 1000 === 0 ? `${delayMs / 1000}s` : `${delayMs}ms`;
}

/** Checks a topic name against Kafka's rules and returns it. */
export function checkTopicName(name: string): string {
  if (!TOPIC_NAME.test(name) || name.length > MAX_TOPIC_LENGTH || name === '.' || name === '..') {
    throw new RangeError(
      `'${name}' is not a valid Kafka topic name (letters, digits, '.', '_', '-'; at most ${MAX_TOPIC_LENGTH})`,
    );
  }
  return name;
}

/** The retry topic of `consumer` for the tier of `delayMs`. */
export function kafkaRetryTopic(consumer: string, delayMs: number, prefix = ''): string {
  return checkTopicName(`${prefix}${consumer}.retry.${kafkaTierLabel(delayMs)}`);
}

/** The dead-letter topic of `consumer`. */
export function kafkaDeadLetterTopic(consumer: string, prefix = ''): string {
  return checkTopicName(`${prefix}${consumer}.dlt`);
}

/** An event topic as deployed (the catalog's `kafka.topic` under a prefix). */
export function kafkaEventTopic(topic: string, prefix = ''): string {
  return checkTopicName(`${prefix}${topic}`);
}

/** Every topic a consumer owns: its retry tiers in ascending order, then its dead-letter topic. */
export function kafkaConsumerTopics(
  consumer: string,
  tiers: readonly number[] = DEFAULT_KAFKA_RETRY_TIERS_MS,
  prefix = '',
): { readonly retry: readonly { delayMs: number; topic: string }[]; readonly deadLetter: string } {
  tiers.forEach((delay, index) => {
    kafkaTierLabel(delay);
    if (index > 0 && delay <= tiers[index - 1]!) {
      throw new RangeError('retry tiers must be strictly ascending');
    }
  });
  return {
    retry: tiers.map((delayMs) => ({ delayMs, topic: kafkaRetryTopic(consumer, delayMs, prefix) })),
    deadLetter: kafkaDeadLetterTopic(consumer, prefix),
  };
}
