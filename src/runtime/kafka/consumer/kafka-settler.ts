/**
 * How the Kafka runner carries a failed record out, once the delivery core decided it: a retry of
 * a `strict` event is retried in place (its partition held for a backoff, nothing overtakes it),
 * any other retry goes as a copy to the retry topic of its tier, and a dead letter to the
 * dead-letter topic, each committed once the broker acknowledged the copy. A copy the broker
 * does not acknowledge commits nothing: the partition is held at the record, which is tried
 * again after a backoff, so no record is lost.
 */
import { backoffDelay, type BackoffOptions, type BackoffSettings } from '../../backoff.js';
import type { DeliveryCounters } from '../../delivery/delivery-outcome.js';
import type { FailedOutcome } from '../../delivery/outcome-settlement.js';
import { bodyString } from '../../delivery/parse-delivery.js';
import type { KafkaInboundRecord, KafkaOutboundRecord } from '../kafka-client.js';
import type { KafkaHeaderValue } from './consumer-headers.js';
import {
  deadLetterHeaders,
  fitKafkaCopy,
  isRecordTooLarge,
  retryCopyHeaders,
} from './dead-letter-record.js';
import { placeRetry } from './failure-routing.js';
import type { KafkaConsumerRoutes, KafkaConsumerRunnerEvent } from './kafka-consumer-types.js';
import type { PartitionRetries } from './partition-retries.js';

/** Delays before a record whose dead-letter or retry copy could not be sent is tried again. */
const DEFAULT_SETTLE_BACKOFF: BackoffSettings = { baseMs: 200, capMs: 10_000, jitter: 0 };

/** Room left in a topic's `max.message.bytes` for the record batch around the one copy. */
const BATCH_FRAMING_BYTES = 1_024;

/** The copy budget (key + value + headers) under a topic's `max.message.bytes`. */
function copyBudget(maxMessageBytes: number): number {
  return Math.max(0, maxMessageBytes - BATCH_FRAMING_BYTES);
}

/** A record being settled, with what the runner learned about it. */
export interface HeldRecord {
  readonly record: KafkaInboundRecord;
  /** Read from one of the consumer's own retry topics: its attempt headers are believed. */
  readonly trusted: boolean;
  readonly attempt: number;
}

interface KafkaSettlerDeps {
  readonly routes: KafkaConsumerRoutes;
  readonly consumer: string;
  readonly strictTypes: ReadonlySet<string>;
  readonly strictBackoff: BackoffOptions | undefined;
  readonly settleBackoff: BackoffOptions | undefined;
  readonly counters: DeliveryCounters;
  /** Source of the backoffs' jitter, in [0, 1) (the runner's `random`). */
  readonly random: () => number;
  readonly counts: { retriedInPlace: number; settleFailures: number };
  /** In-place retries and settle failures of the record at the head of each partition. */
  readonly retries: PartitionRetries;
  send(record: KafkaOutboundRecord): Promise<void>;
  /**
   * Largest copy `topic` takes (its `max.message.bytes`, read once per topic), or undefined when
   * unknown: then the copy is fitted to Kafka's default limit.
   */
  copyLimit?(topic: string): Promise<number | undefined>;
  /** The record is done: commit its position. */
  settle(record: KafkaInboundRecord): void;
  hold(record: KafkaInboundRecord, delayMs: number | undefined): void;
  emit(event: KafkaConsumerRunnerEvent): void;
}

export function createKafkaSettler(
  deps: KafkaSettlerDeps,
): (held: HeldRecord, outcome: FailedOutcome) => Promise<void> {
  const { routes, counters, counts } = deps;
  const emit = (event: KafkaConsumerRunnerEvent) => deps.emit(event);

  /**
   * Sends a retry copy or dead letter fitted to the record limit (dead-letter-record.ts); when
   * the broker still refuses it as too large (a topic with a smaller limit), once more with only
   * the runner's own headers.
   */
  async function sendCopy(
    topic: string,
    key: string,
    value: Buffer,
    headers: Record<string, KafkaHeaderValue>,
  ): Promise<void> {
    const limit = await deps.copyLimit?.(topic);
    const maxBytes = limit === undefined ? undefined : copyBudget(limit);
    try {
      await deps.send({
        topic,
        key,
        value,
        headers: fitKafkaCopy(key, value, headers, { maxBytes }),
      });
    } catch (error) {
      if (!isRecordTooLarge(error)) throw error;
      const minimal = fitKafkaCopy(key, value, headers, { minimal: true });
      await deps.send({ topic, key, value, headers: minimal });
    }
  }

  return async ({ record, trusted, attempt }, outcome) => {
    const { error, body, messageId } = outcome;
    const facts = outcome.letter.failure;
    const eventType = bodyString(body, 'eventType');
    // The pipeline decided retry or dead letter; only where a retry goes is decided here.
    const route =
      outcome.kind === 'retry'
        ? placeRetry({
            attempt,
            strict: eventType !== undefined && deps.strictTypes.has(eventType),
            tiers: routes.retry,
            inPlaceBackoff: deps.strictBackoff,
            now: facts.at.getTime(),
            random: deps.random,
          })
        : undefined;
    if (route?.kind === 'retry-in-place') {
      deps.retries.retriedInPlace(record);
      counters.retried++;
      counts.retriedInPlace++;
      emit({
        type: 'retried',
        messageId: messageId!,
        attempt,
        via: 'in-place',
        delayMs: route.delayMs,
        error,
      });
      deps.hold(record, route.delayMs);
      return;
    }
    // Copies keep the key: the same aggregate stays in one partition of the retry topic too.
    const copyKey = record.key ?? bodyString(body, 'aggregateId') ?? messageId ?? '';
    const value = record.value ?? Buffer.alloc(0);
    try {
      if (route?.kind === 'retry-topic') {
        await sendCopy(
          route.tier.topic,
          copyKey,
          value,
          retryCopyHeaders(record, trusted, facts, route.nextAttempt, route.dueAt),
        );
        deps.settle(record);
        counters.retried++;
        emit({
          type: 'retried',
          messageId: messageId!,
          attempt,
          via: route.tier.topic,
          delayMs: route.tier.delayMs,
          error,
        });
        return;
      }
      await sendCopy(
        routes.deadLetter,
        copyKey,
        value,
        deadLetterHeaders(record, trusted, facts, {
          consumer: deps.consumer,
          groupId: routes.groupId,
          attempts: attempt,
          traceId: outcome.letter.traceId,
        }),
      );
      deps.settle(record);
      counters.deadLettered++;
      emit({ type: 'dead-lettered', messageId, attempts: attempt, error });
    } catch (sendError) {
      // Not acknowledged: nothing is committed; the same record comes back after a backoff.
      counts.settleFailures++;
      const streak = deps.retries.settleFailed(record);
      const delayMs = backoffDelay(streak, deps.settleBackoff, DEFAULT_SETTLE_BACKOFF, deps.random);
      emit({
        type: 'settle-failed',
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        delayMs,
        error: sendError,
      });
      deps.hold(record, delayMs);
    }
  };
}
