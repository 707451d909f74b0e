/**
 * The routes of one consumer for a deployment, from the generated Kafka topology: the event
 * topics it subscribes to, its retry tier topics and dead-letter topic (under the deployment's
 * prefix and tiers, named as `ensureKafkaTopics` creates them), its consumer group, and the event
 * types whose `ordering` is `strict`.
 */
import type { KafkaConsumerRoutes } from './kafka-consumer-types.js';
import {
  resolveKafkaConsumerTopics,
  type KafkaTopology,
  type KafkaTopologyOptions,
} from '../kafka-topology.js';
import { kafkaEventTopic } from '../topic-names.js';

export interface KafkaConsumerRoutesOptions extends Pick<KafkaTopologyOptions, 'prefix' | 'tiers'> {
  /** Consumer group id. Default: the prefix + the consumer's name. */
  readonly groupId?: string;
  /** Handling attempts in all, the first delivery included. Default: retry tiers + 1. */
  readonly maxAttempts?: number;
}

export function kafkaConsumerRoutes(
  topology: KafkaTopology,
  consumer: string,
  options: KafkaConsumerRoutesOptions = {},
): KafkaConsumerRoutes {
  const declared = topology.consumers.find((candidate) => candidate.name === consumer);
  if (declared === undefined) {
    const known = topology.consumers.map((candidate) => candidate.name).join(', ') || 'none';
    throw new RangeError(`the Kafka topology has no consumer '${consumer}' (consumers: ${known})`);
  }
  const prefix = options.prefix ?? '';
  const names = resolveKafkaConsumerTopics(declared, options);
  const topics = [
    ...new Set(declared.subscriptions.map((s) => kafkaEventTopic(s.topic, prefix))),
  ].sort();
  const strict = declared.subscriptions
    .filter((s) => s.ordering === 'strict')
    .map((s) => s.eventType)
    .sort();
  return {
    consumer,
    groupId: options.groupId ?? `${prefix}${consumer}`,
    topics,
    retry: names.retry.map((tier) => ({ topic: tier.topic, delayMs: tier.delayMs })),
    deadLetter: names.deadLetter,
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    ...(strict.length > 0 ? { strictEventTypes: strict } : {}),
  };
}
