/**
 * A consumer's Kafka topics as a QueueDepthSource, from the broker's offsets (what an operator
 * sees with kafka-consumer-groups): for the event and retry topics, the records after the
 * consumer group's committed offsets; for the dead-letter topic, the records after the committed
 * offsets of the group that works the letters off (`deadLetterGroupId`), or all records still
 * stored when there is none: a topic is a log, and evgen's `dlq list`/`replay` read it without
 * consuming, so without such a group the depth only falls by retention — alert on its growth.
 */
import type { QueueDepth, QueueDepthSource } from '../../health/queue-depth.js';
import type { KafkaAdmin } from '../kafka-client.js';
import type { KafkaConsumerRoutes } from './kafka-consumer-types.js';

export interface KafkaQueueDepthsOptions {
  /** The group whose committed offsets mark dead letters as worked off (default: none). */
  readonly deadLetterGroupId?: string;
}

export function kafkaQueueDepths(
  admin: KafkaAdmin,
  routes: KafkaConsumerRoutes,
  options: KafkaQueueDepthsOptions = {},
): QueueDepthSource {
  const topics: { topic: string; role: QueueDepth['role']; group: string | undefined }[] = [
    ...routes.topics.map((topic) => ({ topic, role: 'work' as const, group: routes.groupId })),
    ...routes.retry.map((tier) => ({
      topic: tier.topic,
      role: 'retry' as const,
      group: routes.groupId,
    })),
    { topic: routes.deadLetter, role: 'dead_letter', group: options.deadLetterGroupId },
  ];
  return {
    consumer: routes.consumer,
    async depths() {
      return Promise.all(
        topics.map(async ({ topic, role, group }) => {
          const [ends, committed] = await Promise.all([
            admin.topicOffsets(topic),
            group === undefined ? new Map<number, string>() : admin.committedOffsets(group, topic),
          ]);
          let messages = 0n;
          for (const { partition, start, end } of ends) {
            const from = BigInt(committed.get(partition) ?? start);
            // A committed offset below the first stored one: retention removed the rest.
            const after = from < BigInt(start) ? BigInt(start) : from;
            if (BigInt(end) > after) messages += BigInt(end) - after;
          }
          return { queue: topic, role, messages: Number(messages) };
        }),
      );
    },
  };
}
