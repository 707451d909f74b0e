/**
 * A Kafka consumer's lag per partition of every topic it reads (event and retry topics): the
 * broker's end offsets against this runner's settled position where it owns the partition, else
 * the group's committed offset, else the partition's first offset.
 */
import type { KafkaAdmin, KafkaTopicPartition } from '../kafka-client.js';
import type { KafkaConsumerRoutes, KafkaPartitionLag } from './kafka-consumer-types.js';

export async function consumerLag(
  admin: KafkaAdmin,
  routes: KafkaConsumerRoutes,
  owned: (tp: KafkaTopicPartition) => boolean,
  settledPosition: (tp: KafkaTopicPartition) => string | undefined,
): Promise<KafkaPartitionLag[]> {
  const result: KafkaPartitionLag[] = [];
  for (const topic of [...routes.topics, ...routes.retry.map((tier) => tier.topic)]) {
    const [ends, committed] = await Promise.all([
      admin.topicOffsets(topic),
      admin.committedOffsets(routes.groupId, topic),
    ]);
    for (const { partition, start, end } of ends) {
      const tp = { topic, partition };
      const assigned = owned(tp);
      const position =
        (assigned ? settledPosition(tp) : undefined) ?? committed.get(partition) ?? start;
      const lag = BigInt(end) - BigInt(position);
      result.push({ topic, partition, position, end, lag: Number(lag > 0n ? lag : 0n), assigned });
    }
  }
  return result;
}
