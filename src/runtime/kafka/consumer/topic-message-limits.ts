/**
 * The largest record each copy topic (retry and dead-letter topics) takes: its
 * `max.message.bytes`, or the broker's `message.max.bytes` it inherits, read once per topic.
 */
import type { KafkaAdmin } from '../kafka-client.js';

/** `limit(topic)`: the topic's limit in bytes, or undefined when it cannot be read. */
export function topicMessageLimits(
  admin: () => Promise<KafkaAdmin>,
): (topic: string) => Promise<number | undefined> {
  const limits = new Map<string, Promise<number | undefined>>();
  async function read(topic: string): Promise<number | undefined> {
    try {
      const [described] = await (await admin()).describeTopics([topic]);
      const limit = Number(described?.configs['max.message.bytes']);
      return Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
    } catch {
      // No describe (ACLs, an admin-less client): a refused copy still falls back to minimal.
      return undefined;
    }
  }
  return (topic) => {
    let limit = limits.get(topic);
    if (limit === undefined) {
      limit = read(topic);
      limits.set(topic, limit);
    }
    return limit;
  };
}
