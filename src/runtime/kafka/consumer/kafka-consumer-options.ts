/**
 * The Kafka consumer runner's options: the shared ones (delivery/runner-options.ts) and Kafka's
 * section, `kafka` (client, topics, producer, group settings, in-place and settle backoff, schema
 * ids), resolved once. The old shape, Kafka's settings at the top level, is still accepted.
 */
import type { BackoffOptions } from '../../backoff.js';
import type { MessageHandler } from '../../delivery/message-handler.js';
import {
  OptionChecks,
  resolveDeliveryRunnerOptions,
  transportSection,
  type DeliveryRunnerOptions,
  type ResolvedDeliveryRunnerOptions,
} from '../../delivery/runner-options.js';
import type { SchemaIds } from '../../registry/schema-ids.js';
import type { KafkaClient, KafkaProducer } from '../kafka-client.js';
import type { KafkaRetryTier } from './failure-routing.js';
import type { KafkaConsumerRoutes, KafkaConsumerRunnerEvent } from './kafka-consumer-types.js';

/** The Kafka runner's own settings, grouped under `kafka`. */
export interface KafkaRunnerSettings {
  /** The Kafka client adapter (`kafkajsClient(…)` or `platformaticClient(…)`). */
  readonly client: KafkaClient;
  /** The consumer's topics, retry tiers, group id and attempts: `kafkaConsumerRoutes(kafkaTopology, name)`. */
  readonly routes: KafkaConsumerRoutes;
  /**
   * Producer for retry copies and dead letters; default: one the runner creates (acks = all,
   * idempotent) and closes on stop.
   */
  readonly producer?: KafkaProducer;
  /**
   * Partitions handled at the same time (default 8), and records of one partition handled at the
   * same time (default 8): records with the same key one after the other, in offset order.
   */
  readonly partitionConcurrency?: number;
  /**
   * Least time between two offset commit requests while records keep settling, ms (default 100;
   * 0: the next request as soon as the one before is answered). A record settled after a quiet
   * spell is committed at once; under a stream, the positions settled meanwhile ride on one
   * request (measured at 500 records/s: ~0.3–0.8 requests per record without it). Longer means
   * fewer requests for the broker and more records read again (duplicates the inbox skips) after
   * a crash; a stop commits at once.
   */
  readonly commitIntervalMs?: number;
  /** Group session timeout, ms (adapter default 10 000). */
  readonly sessionTimeoutMs?: number;
  /** How long a rebalance waits for this member (see KafkaConsumerOptions.rebalanceTimeoutMs). */
  readonly rebalanceTimeoutMs?: number;
  /** Backoff of strict events retried in place. */
  readonly strictBackoff?: BackoffOptions;
  /** Backoff before a record whose retry copy or dead letter failed is tried again. Default 200 ms → 10 s. */
  readonly settleBackoff?: BackoffOptions;
  /** Client id for the consumer and producer. */
  readonly clientId?: string;
  /**
   * Values in Confluent's wire format (magic byte 0, schema id, JSON) are always read, beside
   * plain ones on the same topic. With `schemaIds` the id is also looked up (once per id) and
   * must name the event type and version the envelope carries, else the record is a dead letter.
   * An id the registry does not know, or a registry that cannot be reached, does not hold the
   * record up: the envelope's own eventType and schemaVersion decide, with the rules for unknown
   * and newer versions, and the reader validator checks the payload as for any record.
   */
  readonly schemaIds?: SchemaIds;
}

/** `commitIntervalMs` when not given. */
const DEFAULT_COMMIT_INTERVAL_MS = 100;

const KAFKA_SETTINGS = [
  'client',
  'routes',
  'producer',
  'partitionConcurrency',
  'commitIntervalMs',
  'sessionTimeoutMs',
  'rebalanceTimeoutMs',
  'strictBackoff',
  'settleBackoff',
  'clientId',
  'schemaIds',
] as const satisfies readonly (keyof KafkaRunnerSettings)[];

interface KafkaRunnerBase extends DeliveryRunnerOptions<KafkaConsumerRunnerEvent> {
  /** Normally a generated inbox-guarded consumer (`createInventoryServiceConsumer(...)`). */
  readonly handler: MessageHandler;
}

/** The shared options and Kafka's settings in their own section. */
export interface GroupedKafkaRunnerOptions extends KafkaRunnerBase {
  /** Kafka's own settings. */
  readonly kafka: KafkaRunnerSettings;
}

/**
 * @deprecated Kafka's settings at the top level, the old shape: group them under `kafka`
 * (`{ handler, maxAttempts, kafka: { client, routes, producer } }`). Still accepted; removed in
 * the next release.
 */
export interface FlatKafkaRunnerOptions extends KafkaRunnerBase, KafkaRunnerSettings {
  /** Absent in the old shape: the settings are at the top level. */
  readonly kafka?: undefined;
}

/** `createKafkaConsumerRunner`'s options: the shared ones and a `kafka` section. */
export type KafkaConsumerRunnerOptions =
  | GroupedKafkaRunnerOptions
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old shape, kept one release
  | FlatKafkaRunnerOptions;

interface ResolvedKafkaConsumerRunnerOptions extends ResolvedDeliveryRunnerOptions<KafkaConsumerRunnerEvent> {
  readonly client: KafkaClient;
  readonly routes: KafkaConsumerRoutes;
  readonly handler: MessageHandler;
  /** The retry tier of each retry topic the runner reads. */
  readonly tierByTopic: ReadonlyMap<string, KafkaRetryTier>;
  readonly producer: KafkaProducer | undefined;
  /** Undefined: the adapter's default. */
  readonly partitionConcurrency: number | undefined;
  readonly commitIntervalMs: number;
  readonly sessionTimeoutMs: number | undefined;
  readonly rebalanceTimeoutMs: number | undefined;
  readonly strictBackoff: BackoffOptions | undefined;
  readonly settleBackoff: BackoffOptions | undefined;
  readonly clientId: string | undefined;
  readonly schemaIds: SchemaIds | undefined;
}

export function resolveKafkaConsumerRunnerOptions(
  options: KafkaConsumerRunnerOptions,
): ResolvedKafkaConsumerRunnerOptions {
  const checks: OptionChecks = new OptionChecks('createKafkaConsumerRunner');
  const { settings, path } = transportSection<KafkaRunnerSettings>(
    checks,
    options,
    'kafka',
    KAFKA_SETTINGS,
  );
  const { client, routes } = settings;
  if (client === null || typeof client !== 'object' || typeof client.consumer !== 'function')
    checks.fail(
      `${path}client`,
      client,
      'a Kafka client adapter (kafkajsClient(…), platformaticClient(…))',
    );
  if (routes === null || typeof routes !== 'object' || !Array.isArray(routes.retry))
    checks.fail(`${path}routes`, routes, 'kafkaConsumerRoutes(kafkaTopology, name)');
  if (!Array.isArray(routes.topics) || routes.topics.length === 0)
    checks.fail(`${path}routes.topics`, routes.topics, 'at least one event topic');
  // Array.isArray narrows to any[]: the declared element types are taken back.
  const retry: readonly KafkaRetryTier[] = routes.retry;
  const topics: readonly string[] = routes.topics;
  const tierByTopic = new Map(retry.map((tier) => [tier.topic, tier]));
  for (const topic of topics)
    if (tierByTopic.has(topic) || topic === routes.deadLetter)
      checks.fail(
        `${path}routes.topics`,
        topic,
        'topics that are not also a retry or dead-letter topic',
      );
  const shared = resolveDeliveryRunnerOptions(
    checks,
    options,
    checks.positiveInteger(
      `${path}routes.maxAttempts`,
      routes.maxAttempts,
      routes.retry.length + 1,
    ),
  );
  const positive = (option: 'sessionTimeoutMs' | 'rebalanceTimeoutMs') =>
    settings[option] === undefined
      ? undefined
      : checks.positiveNumber(`${path}${option}`, settings[option], 0);
  return {
    ...shared,
    client,
    routes,
    handler: checks.handler('handler', options.handler),
    tierByTopic,
    producer: settings.producer,
    partitionConcurrency:
      settings.partitionConcurrency === undefined
        ? undefined
        : checks.positiveInteger(`${path}partitionConcurrency`, settings.partitionConcurrency, 1),
    commitIntervalMs: checks.nonNegativeNumber(
      `${path}commitIntervalMs`,
      settings.commitIntervalMs,
      DEFAULT_COMMIT_INTERVAL_MS,
    ),
    sessionTimeoutMs: positive('sessionTimeoutMs'),
    rebalanceTimeoutMs: positive('rebalanceTimeoutMs'),
    strictBackoff: checks.backoff(`${path}strictBackoff`, settings.strictBackoff),
    settleBackoff: checks.backoff(`${path}settleBackoff`, settings.settleBackoff),
    clientId: checks.optionalName(`${path}clientId`, settings.clientId),
    schemaIds: settings.schemaIds,
  };
}
