/**
 * A Kafka consumer fake for partition holds (pure logic, no broker): it records the calls a hold
 * makes (`pause orders:0`, `seek 7`, `resume orders:0`) in order, and owns one partition.
 */
import type {
  KafkaCommitOffset,
  KafkaConsumer,
  KafkaTopicPartition,
} from '../../../src/runtime/kafka/kafka-client.js';

/** The one partition the recording consumer is assigned. */
export const HELD_PARTITION: KafkaTopicPartition = { topic: 'orders', partition: 0 };

/** The calls a partition hold makes on the consumer, in order, pushed onto `calls`. */
export function recordingConsumer(calls: string[]): KafkaConsumer {
  const name = (tps: readonly KafkaTopicPartition[]) =>
    tps.map((one) => `${one.topic}:${one.partition}`).join(',');
  return {
    pause: (tps: readonly KafkaTopicPartition[]) => calls.push(`pause ${name(tps)}`),
    resume: (tps: readonly KafkaTopicPartition[]) => calls.push(`resume ${name(tps)}`),
    seek: (position: KafkaCommitOffset) => calls.push(`seek ${position.offset}`),
    assignment: () => [HELD_PARTITION],
  } as unknown as KafkaConsumer;
}
