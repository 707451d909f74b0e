/**
 * What the Kafka consumer runner is configured with and reports: its routes (topics read and
 * written), options, events, metrics, lag and the runner's own queries beside the shared
 * lifecycle.
 */
import type { MessageBodyLimits } from '../../decode-message-body.js';
import type { SchemaIds } from '../../registry/schema-ids.js';
import type { BackoffOptions } from '../../backoff.js';
import type { CircuitBreakerOptions } from '../../delivery/circuit-breaker.js';
import type { FailureClassifier } from '../../delivery/failure.js';
import type { DeliveryCounts } from '../../delivery/delivery-outcome.js';
import type { DeliveryEventOf } from '../../delivery/delivery-event.js';
import type { DeliveryRunner } from '../../delivery/delivery-runner.js';
import type { MessageHandler } from '../../delivery/message-handler.js';
import type { KafkaClient, KafkaProducer, KafkaTopicPartition } from '../kafka-client.js';
import type { KafkaRetryTier } from './failure-routing.js';

/** The header that carries the envelope's messageId on every evgen record. */
export const KAFKA_MESSAGE_ID_HEADER = 'messageId';

/** The topics one consumer reads and writes. */
export interface KafkaConsumerRoutes {
  /** The consumer's name (its inbox key); recorded in dead letters. */
  readonly consumer: string;
  /** Consumer group id. */
  readonly groupId: string;
  /** Event topics it subscribes to. */
  readonly topics: readonly string[];
  /** Its retry topics, one per delay tier, ascending. May be empty (no retries). */
  readonly retry: readonly KafkaRetryTier[];
  /** Its dead-letter topic. */
  readonly deadLetter: string;
  /** Handling attempts in all, the first delivery included. Default: retry tiers + 1. */
  readonly maxAttempts?: number;
  /** Event types whose failed records block their partition (retry in place) instead of a retry topic. */
  readonly strictEventTypes?: readonly string[];
}

/** Where a record was read. */
export interface KafkaRecordPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** The delivery core's events (handled and skipped ones with their record), plus Kafka's own. */
export type KafkaConsumerRunnerEvent =
  | (DeliveryEventOf<'handled' | 'skipped'> & KafkaRecordPosition)
  | (DeliveryEventOf<'retried'> & {
      /** The retry topic the copy went to, or `in-place` for a strict event. */
      readonly via: string;
    })
  | DeliveryEventOf<'dead-lettered' | 'paused' | 'resumed' | 'error' | 'lifecycle'>
  | { readonly type: 'assigned'; readonly partitions: readonly KafkaTopicPartition[] }
  | { readonly type: 'revoked'; readonly partitions: readonly KafkaTopicPartition[] }
  | ({
      /** A record of a retry topic is not due: its partition waits until `dueAt`. */
      readonly type: 'waiting';
      readonly dueAt: number;
    } & KafkaRecordPosition)
  | ({
      /** A retry copy or dead letter was not acknowledged; the record is tried again after `delayMs`. */
      readonly type: 'settle-failed';
      readonly delayMs: number;
      readonly error: unknown;
    } & KafkaRecordPosition)
  | { readonly type: 'commit-failed'; readonly error: unknown };

export interface KafkaConsumerRunnerOptions {
  /** The Kafka client adapter (`kafkajsClient(…)` or `platformaticClient(…)`). */
  readonly client: KafkaClient;
  /** The consumer's topics, retry tiers, group id and attempts: `kafkaConsumerRoutes(kafkaTopology, name)`. */
  readonly routes: KafkaConsumerRoutes;
  /** Normally a generated inbox-guarded consumer (`createInventoryServiceConsumer(...)`). */
  readonly handler: MessageHandler;
  /**
   * Producer for retry copies and dead letters; default: one the runner creates (acks = all,
   * idempotent) and closes on stop.
   */
  readonly producer?: KafkaProducer;
  /** Partitions handled at the same time (default 8); a partition is always sequential. */
  readonly partitionConcurrency?: number;
  /** Group session timeout, ms (adapter default 10 000). */
  readonly sessionTimeoutMs?: number;
  /** How long a rebalance waits for this member (see KafkaConsumerOptions.rebalanceTimeoutMs). */
  readonly rebalanceTimeoutMs?: number;
  /** Backoff of strict events retried in place. */
  readonly strictBackoff?: BackoffOptions;
  /** Backoff before a record whose retry copy or dead letter failed is tried again. Default 200 ms → 10 s. */
  readonly settleBackoff?: BackoffOptions;
  /** Largest value and deepest nesting accepted (see decodeMessageBody); beyond them: dead letter. */
  readonly messageLimits?: MessageBodyLimits;
  /** Client id for the consumer and producer. */
  readonly clientId?: string;
  /**
   * When the handler fails because a dependency is unavailable (`isUnavailableError`: database
   * connection lost or refused, UnavailableError), the record is not retried: every partition
   * pauses (the record is read again from where it stopped) for a backoff, then resumes after
   * `healthCheck` (if given) succeeds. No attempt is used and nothing goes to a retry topic.
   */
  readonly circuitBreaker?: CircuitBreakerOptions;
  /** Your say in what a handler's failure means, asked before evgen's own (see FailureClassifier). */
  readonly classify?: FailureClassifier;
  /**
   * Values in Confluent's wire format (magic byte 0, schema id, JSON) are always read, beside
   * plain ones on the same topic. With `schemaIds` the id is also looked up (once per id) and
   * must name the event type and version the envelope carries, else the record is a dead letter.
   * An id the registry does not know, or a registry that cannot be reached, does not hold the
   * record up: the envelope's own eventType and schemaVersion decide, with the rules for unknown
   * and newer versions, and the reader validator checks the payload as for any record.
   */
  readonly schemaIds?: SchemaIds;
  /** Observability hook; must not throw. */
  readonly onEvent?: (event: KafkaConsumerRunnerEvent) => void;
  /** Clock for due times (tests). */
  readonly now?: () => number;
}

/** `retried` counts copies acknowledged on a retry topic plus in-place retries of strict events. */
export interface KafkaConsumerRunnerMetrics extends DeliveryCounts {
  /** Of the retries, in-place retries (strict events). */
  readonly retriedInPlace: number;
  /** Retry copies or dead letters that were not acknowledged (the record is tried again). */
  readonly settleFailures: number;
  /** Offset commit requests the broker acknowledged / refused. */
  readonly commits: number;
  readonly commitFailures: number;
  /** Times the circuit breaker paused consumption (a dependency was unavailable). */
  readonly pauses: number;
}

export interface KafkaPartitionLag extends KafkaTopicPartition {
  /**
   * Next offset to handle: this runner's settled position when it owns the partition and has
   * settled a record of it, else the group's committed offset, else the partition's first offset.
   */
  readonly position: string;
  /** Offset the next produced record gets (high watermark). */
  readonly end: string;
  /** Records not handled yet: end − position. */
  readonly lag: number;
  /** Whether this runner owns the partition now. */
  readonly assigned: boolean;
}

/**
 * `start()` creates the producer, joins the group and starts consuming; `stop()` stops taking
 * records, waits for the ones being handled, commits every settled position, then leaves the
 * group (records fetched but not handled are redelivered to the next owner).
 */
export interface KafkaConsumerRunner extends DeliveryRunner<KafkaConsumerRunnerMetrics> {
  /** Partitions currently assigned to this runner. */
  assignment(): KafkaTopicPartition[];
  /** The settled position of a partition (next offset to handle), if any since it was assigned. */
  position(tp: KafkaTopicPartition): string | undefined;
  /** Commits every settled position now (also done continuously in the background). */
  flushCommits(): Promise<void>;
  /**
   * Lag of every partition of the topics the runner reads (event topics and retry topics), from
   * the broker's end offsets: what is waiting to be handled, per partition.
   */
  lag(): Promise<KafkaPartitionLag[]>;
}
