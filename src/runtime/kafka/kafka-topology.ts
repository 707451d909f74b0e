/**
 * The Kafka topics evgen needs, and `ensureKafkaTopics`, which creates the missing ones and
 * refuses to work on top of ones that differ from the declaration.
 *
 * `KafkaTopology` is generated from the catalog (`kafka/topics.ts`): every event topic with its
 * partitions, retention and cleanup policy, and per consumer its subscriptions (with each event's
 * ordering), retry tier topics and dead-letter topic. A prefix and other retry tiers are
 * deployment choices given at run time, as for RabbitMQ.
 */
import type { KafkaAdmin, KafkaClient, KafkaTopicSpec } from './kafka-client.js';
import { kafkaConsumerTopics, kafkaEventTopic } from './topic-names.js';

type KafkaCleanupPolicy = 'delete' | 'compact' | 'compact,delete';

export interface KafkaTopicDeclaration {
  readonly topic: string;
  readonly partitions: number;
  /** `retention.ms`; -1 = forever. */
  readonly retentionMs: number;
  readonly cleanupPolicy: KafkaCleanupPolicy;
}

interface KafkaSubscription {
  readonly eventType: string;
  readonly topic: string;
  /** `strict`: a failed record blocks its partition (retried in place); `relaxed`: retry topics. */
  readonly ordering: 'relaxed' | 'strict';
}

export interface KafkaConsumerTopology {
  readonly name: string;
  /** Sorted by eventType. */
  readonly subscriptions: readonly KafkaSubscription[];
  /** Retry tier topics (ascending delay) and the dead-letter topic, unprefixed. */
  readonly retryTopics: readonly { readonly delayMs: number; readonly topic: string }[];
  readonly deadLetterTopic: string;
  /** Partitions of its retry and dead-letter topics: the most of any subscribed topic. */
  readonly partitions: number;
  /** `retention.ms` of its retry topics and of its dead-letter topic. */
  readonly retryRetentionMs: number;
  readonly deadLetterRetentionMs: number;
}

export interface KafkaTopology {
  /** Event topics, sorted. */
  readonly topics: readonly KafkaTopicDeclaration[];
  /** Sorted by name. */
  readonly consumers: readonly KafkaConsumerTopology[];
}

export interface KafkaTopologyOptions {
  /** Prepended to every topic name (tests isolate themselves with it). Default "". */
  readonly prefix?: string;
  /** Other retry delay tiers (ms, ascending) than the generated ones. */
  readonly tiers?: readonly number[];
  /** Replication factor of created topics (default 1 for a single broker; use 3 in production). */
  readonly replicationFactor?: number;
}

/** The consumer's retry and dead-letter topic names for a deployment. */
export function resolveKafkaConsumerTopics(
  consumer: KafkaConsumerTopology,
  options: Pick<KafkaTopologyOptions, 'prefix' | 'tiers'> = {},
): { readonly retry: readonly { delayMs: number; topic: string }[]; readonly deadLetter: string } {
  return kafkaConsumerTopics(
    consumer.name,
    options.tiers ?? consumer.retryTopics.map((tier) => tier.delayMs),
    options.prefix ?? '',
  );
}

/** Every topic of the topology as it should exist: names prefixed, configs spelled out. Pure. */
export function resolveKafkaTopics(
  topology: KafkaTopology,
  options: KafkaTopologyOptions = {},
): KafkaTopicSpec[] {
  const replicationFactor = options.replicationFactor ?? 1;
  const spec = (
    topic: string,
    partitions: number,
    retentionMs: number,
    cleanupPolicy: KafkaCleanupPolicy,
  ): KafkaTopicSpec => ({
    topic,
    partitions,
    replicationFactor,
    configs: { 'cleanup.policy': cleanupPolicy, 'retention.ms': String(retentionMs) },
  });
  const specs = topology.topics.map((t) =>
    spec(kafkaEventTopic(t.topic, options.prefix), t.partitions, t.retentionMs, t.cleanupPolicy),
  );
  for (const consumer of topology.consumers) {
    const names = resolveKafkaConsumerTopics(consumer, options);
    for (const tier of names.retry) {
      specs.push(spec(tier.topic, consumer.partitions, consumer.retryRetentionMs, 'delete'));
    }
    specs.push(
      spec(names.deadLetter, consumer.partitions, consumer.deadLetterRetentionMs, 'delete'),
    );
  }
  return specs.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
}

/** One way an existing topic differs from its declaration. */
export interface KafkaTopicMismatch {
  readonly topic: string;
  readonly setting: 'partitions' | 'replication.factor' | 'cleanup.policy' | 'retention.ms';
  readonly declared: string;
  readonly actual: string;
}

/** Existing topics differ from the declaration; nothing was changed on them. */
export class KafkaTopologyMismatchError extends Error {
  readonly code = 'KafkaTopologyMismatchError';
  readonly retryable = false;
  constructor(
    readonly mismatches: readonly KafkaTopicMismatch[],
    readonly created: readonly string[],
  ) {
    super(
      `Kafka topics differ from the catalog: ` +
        mismatches
          .map((m) => `${m.topic} ${m.setting} is ${m.actual}, declared ${m.declared}`)
          .join('; ') +
        '. Fix the topic (e.g. kafka-topics --alter --partitions) or the catalog; a different ' +
        'partition count moves keys to other partitions and breaks per-aggregate order.',
    );
    this.name = 'KafkaTopologyMismatchError';
  }
}

export interface EnsureKafkaTopicsResult {
  /** Topics this call created. */
  readonly created: readonly string[];
  /** Topics that existed and match the declaration. */
  readonly existing: readonly string[];
}

/**
 * Creates the topology's missing topics and checks the existing ones. An existing topic with
 * another partition count, replication factor, cleanup policy or retention is reported
 * (`KafkaTopologyMismatchError`, listing every difference) and left as it is.
 *
 * Given a client, it opens an admin of its own and closes it before returning (also on error):
 * an admin left open keeps the process alive. Given an admin, the caller keeps and closes it.
 */
export async function ensureKafkaTopics(
  source: KafkaAdmin | Pick<KafkaClient, 'admin'>,
  topology: KafkaTopology,
  options: KafkaTopologyOptions = {},
): Promise<EnsureKafkaTopicsResult> {
  if (!('listTopics' in source)) {
    const admin = await source.admin();
    try {
      return await ensureTopicsWith(admin, topology, options);
    } finally {
      await admin.close();
    }
  }
  return ensureTopicsWith(source, topology, options);
}

async function ensureTopicsWith(
  admin: KafkaAdmin,
  topology: KafkaTopology,
  options: KafkaTopologyOptions,
): Promise<EnsureKafkaTopicsResult> {
  const wanted = resolveKafkaTopics(topology, options);
  const present = new Set(await admin.listTopics());
  const missing = wanted.filter((spec) => !present.has(spec.topic));
  const existing = wanted.filter((spec) => present.has(spec.topic));
  if (missing.length > 0) await admin.createTopics(missing);
  const mismatches: KafkaTopicMismatch[] = [];
  const described = await admin.describeTopics(existing.map((spec) => spec.topic));
  for (const [index, actual] of described.entries()) {
    const spec = existing[index]!;
    const differ = (setting: KafkaTopicMismatch['setting'], declared: string, found: string) => {
      if (declared !== found)
        mismatches.push({ topic: spec.topic, setting, declared, actual: found });
    };
    differ('partitions', String(spec.partitions), String(actual.partitions));
    differ(
      'replication.factor',
      String(spec.replicationFactor ?? 1),
      String(actual.replicationFactor),
    );
    for (const name of ['cleanup.policy', 'retention.ms'] as const) {
      differ(name, spec.configs![name]!, actual.configs[name] ?? '(unset)');
    }
  }
  const created = missing.map((spec) => spec.topic);
  if (mismatches.length > 0) throw new KafkaTopologyMismatchError(mismatches, created);
  return { created, existing: existing.map((spec) => spec.topic) };
}
