/**
 * What the Kafka consumer runner works on and reports: its routes (topics read and written),
 * events, metrics, lag and the runner's own queries beside the shared lifecycle. Its options:
 * kafka-consumer-options.ts.
 */
import type { DeliveryCounts } from '../../delivery/delivery-outcome.js';
import type { DeliveryEventOf } from '../../delivery/delivery-event.js';
import type { DeliveryRunner } from '../../delivery/delivery-runner.js';
import type { KafkaTopicPartition } from '../kafka-client.js';
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
  /**
   * Handling attempts in all, the first delivery included: the default of the runner's
   * `maxAttempts` (whose own default is retry tiers + 1).
   */
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
  /** Fetch requests answered (the consumer's polls, with records or none). */
  readonly fetches: number;
  /**
   * Epoch ms (wall clock) of the last answered fetch; absent before the first. The time since it
   * is how long the consumer has not polled: it grows while handlers hold the loop.
   */
  readonly lastFetchAt?: number;
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
  /**
   * Commits every settled position now (also done continuously in the background). Waits at most
   * 10 s (a commit held up by a rebalance); what is not stored by then is reported as
   * `commit-failed`.
   */
  flushCommits(): Promise<void>;
  /**
   * Lag of every partition of the topics the runner reads (event topics and retry topics), from
   * the broker's end offsets: what is waiting to be handled, per partition.
   */
  lag(): Promise<KafkaPartitionLag[]>;
}
