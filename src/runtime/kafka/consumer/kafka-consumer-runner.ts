/**
 * Runs one inbox-guarded consumer on Kafka (any adapter of the transport interface).
 *
 * Per partition the adapter hands records over one at a time in offset order; partitions run
 * concurrently. For each record:
 *   - the value must be an evgen envelope (JSON object within the message limits, a `messageId`
 *     equal to the `messageId` header when that header is present), else it goes straight to the
 *     dead-letter topic: it can never succeed;
 *   - `handler.handle(envelope)` runs (the generated consumer: inbox row + business writes in ONE
 *     transaction); the record's position (offset + 1) is committed only after it resolved, i.e.
 *     committed; a duplicate resolves `'duplicate'` without running the business code and is
 *     committed the same way;
 *   - a retryable failure produces a copy (same key, value, messageId and headers, `evgen-attempt`
 *     + 1, a due time) to the retry topic of its delay tier and, once the broker acknowledged the
 *     copy, commits the record: the partition moves on at once (non-blocking retries). The runner
 *     reads its retry topics too: a copy that is not due yet pauses that one partition (pause,
 *     seek back, resume at the due time), never the others, and nothing sleeps in a handler;
 *   - events configured as `strict` are retried in place instead: their partition waits (paused)
 *     with exponential backoff, so nothing behind the failed record overtakes it;
 *   - a non-retryable failure, or the last attempt, produces a dead letter with diagnostics
 *     (evgen's and Spring Kafka's `kafka_dlt-*` headers) and commits once it is acknowledged.
 * A failure that says a dependency is unavailable (database down) is no record's fault: the record
 * stays where it is and every partition pauses until the circuit breaker's health check passes
 * (delivery/circuit-breaker.ts); no attempt is used.
 * If a retry copy or dead letter is not acknowledged (broker down), nothing is committed: the
 * partition seeks back to the record and tries it again after a backoff, so no record is lost.
 * Attempt and diagnostic headers are only believed on the consumer's own retry topics.
 */
import { type MessageBodyLimits } from '../../decode-message-body.js';
import { backoffDelay, type BackoffOptions, type BackoffSettings } from '../../backoff.js';
import { createDeliveryPipeline } from '../../delivery/delivery-pipeline.js';
import type { AggregateHint, Delivery } from '../../delivery/delivery.js';
import { DeliveryCounters, type DeliveryCounts } from '../../delivery/delivery-outcome.js';
import {
  settleOutcome,
  type FailedOutcome,
  type OutcomeSettlement,
} from '../../delivery/outcome-settlement.js';
import { bodyString, parseDelivery } from '../../delivery/parse-delivery.js';
import type { MessageHandler } from '../../delivery/message-handler.js';
import type { DeliveryRunner } from '../../delivery/delivery-runner.js';
import type { DeliveryEventOf } from '../../delivery/delivery-event.js';
import { safeObserver } from '../../delivery/safe-observer.js';
import type {
  KafkaAdmin,
  KafkaClient,
  KafkaConsumer,
  KafkaInboundRecord,
  KafkaOutboundRecord,
  KafkaProducer,
  KafkaTopicPartition,
} from '../kafka-client.js';
import {
  KAFKA_CONSUMER_HEADERS as H,
  headerInteger,
  headerText,
  headerTime,
} from './consumer-headers.js';
import { deadLetterHeaders, retryCopyHeaders } from './dead-letter-record.js';
import { routeFailure, type KafkaRetryTier } from './failure-routing.js';
import { OffsetCommitter } from './offset-committer.js';
import { CircuitBreaker, type CircuitBreakerOptions } from '../../delivery/circuit-breaker.js';
import { KAFKA_HEADERS } from '../kafka-record.js';

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
interface KafkaRecordPosition {
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
  | DeliveryEventOf<'dead-lettered' | 'paused' | 'resumed' | 'error'>
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
  readonly client: KafkaClient;
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

/** Delays before a record whose dead-letter or retry copy could not be sent is tried again. */
const DEFAULT_SETTLE_BACKOFF: BackoffSettings = { baseMs: 200, capMs: 10_000, jitter: 0 };

const tpKey = (tp: KafkaTopicPartition) => `${tp.topic}:${tp.partition}`;

/** A record being settled, with what the runner learned about it. */
interface HeldRecord {
  readonly record: KafkaInboundRecord;
  /** Read from one of the consumer's own retry topics: its attempt headers are believed. */
  readonly trusted: boolean;
  readonly attempt: number;
}

/**
 * Decodes a record's value into an envelope object and checks its messageId against the header;
 * throws MalformedMessageError with the reason.
 */
export function parseKafkaRecord(
  record: Pick<KafkaInboundRecord, 'value' | 'headers'>,
  limits: MessageBodyLimits = {},
): Record<string, unknown> {
  return parseDelivery(
    record.value,
    { messageId: headerText(record.headers, KAFKA_MESSAGE_ID_HEADER) },
    limits,
    'messageId header',
  );
}

/** The aggregate evgen's headers name (aggregateType, aggregateId, aggregateVersion), if they do. */
function aggregateHint(record: KafkaInboundRecord): AggregateHint | undefined {
  const type = headerText(record.headers, KAFKA_HEADERS.aggregateType);
  const id = headerText(record.headers, KAFKA_HEADERS.aggregateId);
  if (type === undefined || id === undefined) return undefined;
  const version = headerInteger(record.headers, KAFKA_HEADERS.aggregateVersion);
  return version !== undefined ? { type, id, version } : { type, id };
}

export function createKafkaConsumerRunner(
  options: KafkaConsumerRunnerOptions,
): KafkaConsumerRunner {
  const { routes, handler, client } = options;
  const maxAttempts = routes.maxAttempts ?? routes.retry.length + 1;
  const pipeline = createDeliveryPipeline({
    handler,
    consumer: routes.consumer,
    maxAttempts,
    messageIdHint: 'messageId header',
    ...(options.messageLimits !== undefined ? { messageLimits: options.messageLimits } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
  if (routes.topics.length === 0) throw new RangeError('routes.topics is empty');
  const tierByTopic = new Map(routes.retry.map((tier) => [tier.topic, tier]));
  for (const topic of routes.topics) {
    if (tierByTopic.has(topic) || topic === routes.deadLetter)
      throw new RangeError(`topic ${topic} is both an event topic and a retry/dead-letter topic`);
  }
  const strictTypes = new Set(routes.strictEventTypes ?? []);
  const now = options.now ?? Date.now;
  const emit = safeObserver(options.onEvent);

  const outcomes = new DeliveryCounters();
  const counts = {
    retriedInPlace: 0,
    settleFailures: 0,
    commitFailures: 0,
  };
  let consumer: KafkaConsumer | undefined;
  let producer: KafkaProducer | undefined;
  let admin: Promise<KafkaAdmin> | undefined;
  const ownsProducer = options.producer === undefined;
  let state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Partitions this member owns now. */
  const owned = new Set<string>();
  /** Partitions paused by a hold: a timer resumes each, or a re-assignment does. */
  const holds = new Map<string, NodeJS.Timeout | undefined>();
  /** In-place retries of the record at the head of a partition (strict events). */
  const inPlace = new Map<string, { offset: string; retries: number }>();
  /** Consecutive settle failures per partition, for the backoff. */
  const settleStreak = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();

  const breaker = new CircuitBreaker(options.circuitBreaker ?? {}, {
    pause(error, delayMs) {
      emit({ type: 'paused', delayMs, error });
      const partitions = consumer?.assignment() ?? [];
      if (partitions.length === 0) return;
      try {
        consumer!.pause(partitions);
      } catch (pauseError) {
        emit({ type: 'error', error: pauseError });
      }
    },
    async resume() {
      if (state !== 'running' || consumer === undefined) return;
      // Partitions whose own hold timer is still running (a retry copy not due yet) stay paused.
      const partitions = consumer
        .assignment()
        .filter((tp) => holds.get(tpKey(tp)) === undefined && owned.has(tpKey(tp)));
      for (const tp of partitions) holds.delete(tpKey(tp));
      try {
        if (partitions.length > 0) consumer.resume(partitions);
        emit({ type: 'resumed' });
      } catch (error) {
        emit({ type: 'error', error });
      }
    },
  });

  const settlement: OutcomeSettlement<HeldRecord> = {
    breaker,
    counters: outcomes,
    settle: ({ record }) => settle(record),
    // Every partition pauses with the breaker; this record is read again on resume.
    putBack: ({ record }) => hold(record, undefined),
    settleFailure,
    handled({ record, attempt }, outcome) {
      emit({
        type: 'handled',
        messageId: outcome.messageId,
        attempt,
        result: outcome.result,
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
      });
    },
    skipped({ record }, outcome) {
      emit({
        type: 'skipped',
        messageId: outcome.messageId,
        eventType: outcome.eventType,
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
      });
    },
  };

  const committer = new OffsetCommitter({
    commit: (offsets) => consumer!.commit(offsets),
    onError: (error) => {
      counts.commitFailures++;
      emit({ type: 'commit-failed', error });
    },
  });

  /**
   * Stops delivery of a partition at `record` and, after `delayMs` (when given), resumes it there:
   * the adapter delivers the same record again. Used for not-yet-due retry copies, in-place
   * retries and unacknowledged settles; never blocks other partitions.
   */
  function hold(record: KafkaInboundRecord, delayMs: number | undefined): void {
    const tp = { topic: record.topic, partition: record.partition };
    const key = tpKey(tp);
    if (!owned.has(key) || consumer === undefined) return; // revoked meanwhile: the next owner reads it
    clearTimeout(holds.get(key));
    try {
      consumer.pause([tp]);
      consumer.seek({ ...tp, offset: record.offset });
    } catch (error) {
      emit({ type: 'error', error });
    }
    const timer =
      delayMs === undefined
        ? undefined
        : setTimeout(() => {
            holds.delete(key);
            // While the breaker is open every partition stays paused; resuming takes this one too.
            if (state !== 'running' || !owned.has(key) || breaker.isOpen) return;
            try {
              consumer?.resume([tp]);
            } catch (error) {
              emit({ type: 'error', error });
            }
          }, delayMs);
    holds.set(key, timer);
  }

  function settle(record: KafkaInboundRecord): void {
    const tp = { topic: record.topic, partition: record.partition };
    const key = tpKey(tp);
    if (inPlace.get(key)?.offset === record.offset) inPlace.delete(key);
    settleStreak.delete(key);
    // A record of a partition revoked meanwhile is not committed by this member.
    if (owned.has(key)) committer.settled(tp, BigInt(record.offset) + 1n);
  }

  async function send(record: KafkaOutboundRecord): Promise<void> {
    await producer!.send([record]);
  }

  async function onRecord(record: KafkaInboundRecord): Promise<void> {
    if (state !== 'running') {
      // Stopping: leave the record for the next owner.
      hold(record, undefined);
      return;
    }
    if (owned.has(tpKey(record))) {
      // Records the client skipped come first: seek back to them (the committer never commits
      // past them either way).
      const missing = committer.received(record, BigInt(record.offset));
      if (missing !== undefined) {
        hold({ ...record, offset: missing.toString() }, 0);
        return;
      }
    }
    const work = processRecord(record);
    inFlight.add(work);
    try {
      await work;
    } finally {
      inFlight.delete(work);
    }
  }

  async function processRecord(record: KafkaInboundRecord): Promise<void> {
    const key = tpKey(record);
    // The database is down: leave the record where it is, it is read again on resume.
    if (breaker.isOpen) {
      hold(record, undefined);
      return;
    }
    const tier = tierByTopic.get(record.topic);
    const trusted = tier !== undefined;
    if (tier !== undefined) {
      // The copy's own due time, but never later than its tier's delay after it was written: a
      // forged or broken header cannot park a partition.
      const latest = Number(record.timestamp) + tier.delayMs;
      const dueAt = Math.min(headerTime(record.headers, H.retryDueAt) ?? latest, latest);
      const wait = dueAt - now();
      if (wait > 0) {
        emit({
          type: 'waiting',
          topic: record.topic,
          partition: record.partition,
          offset: record.offset,
          dueAt,
        });
        hold(record, wait);
        return;
      }
    }
    const previous = inPlace.get(key);
    const retriesInPlace = previous?.offset === record.offset ? previous.retries : 0;
    const firstAttempt = trusted ? Math.max(1, headerInteger(record.headers, H.attempt) ?? 1) : 1;
    const attempt = firstAttempt + retriesInPlace;

    const eventType = headerText(record.headers, KAFKA_HEADERS.eventType);
    const traceId = headerText(record.headers, KAFKA_HEADERS.traceId);
    const messageId = headerText(record.headers, KAFKA_MESSAGE_ID_HEADER);
    const aggregate = aggregateHint(record);
    const delivery: Delivery = {
      body: record.value,
      ...(messageId !== undefined ? { messageId } : {}),
      ...(eventType !== undefined ? { eventType } : {}),
      ...(aggregate !== undefined ? { aggregate } : {}),
      ...(traceId !== undefined ? { traceId } : {}),
      attempt,
      facts: {
        transport: 'kafka',
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        redelivered: attempt > 1,
        headers: record.headers,
      },
    };
    await settleOutcome(await pipeline.process(delivery), { record, trusted, attempt }, settlement);
  }

  async function settleFailure(
    { record, trusted, attempt }: HeldRecord,
    outcome: FailedOutcome,
  ): Promise<void> {
    const key = tpKey(record);
    const { error, body, messageId } = outcome;
    const facts = outcome.letter.failure;
    const eventType = bodyString(body, 'eventType');
    const route = routeFailure({
      attempt,
      retryable: outcome.kind === 'retry',
      strict: eventType !== undefined && strictTypes.has(eventType),
      tiers: routes.retry,
      maxAttempts,
      ...(options.strictBackoff !== undefined ? { inPlaceBackoff: options.strictBackoff } : {}),
      now: facts.at.getTime(),
    });
    if (route.kind === 'retry-in-place') {
      inPlace.set(key, {
        offset: record.offset,
        retries: (inPlace.get(key)?.offset === record.offset ? inPlace.get(key)!.retries : 0) + 1,
      });
      outcomes.retried++;
      counts.retriedInPlace++;
      emit({
        type: 'retried',
        messageId: messageId!,
        attempt,
        via: 'in-place',
        delayMs: route.delayMs,
        error,
      });
      hold(record, route.delayMs);
      return;
    }
    // Copies keep the key: the same aggregate stays in one partition of the retry topic too.
    const copyKey = record.key ?? bodyString(body, 'aggregateId') ?? messageId ?? '';
    const value = record.value ?? Buffer.alloc(0);
    try {
      if (route.kind === 'retry-topic') {
        await send({
          topic: route.tier.topic,
          key: copyKey,
          value,
          headers: retryCopyHeaders(record, trusted, facts, route.nextAttempt, route.dueAt),
        });
        settle(record);
        outcomes.retried++;
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
      const traceId = outcome.letter.traceId;
      await send({
        topic: routes.deadLetter,
        key: copyKey,
        value,
        headers: deadLetterHeaders(record, trusted, facts, {
          consumer: handler.name,
          groupId: routes.groupId,
          attempts: attempt,
          ...(traceId !== undefined ? { traceId } : {}),
        }),
      });
      settle(record);
      outcomes.deadLettered++;
      emit({ type: 'dead-lettered', messageId, attempts: attempt, error });
    } catch (sendError) {
      // Not acknowledged: nothing is committed; the same record comes back after a backoff.
      counts.settleFailures++;
      const streak = (settleStreak.get(key) ?? 0) + 1;
      settleStreak.set(key, streak);
      const delayMs = backoffDelay(streak, options.settleBackoff, DEFAULT_SETTLE_BACKOFF);
      emit({
        type: 'settle-failed',
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        delayMs,
        error: sendError,
      });
      hold(record, delayMs);
    }
  }

  function onAssigned(partitions: readonly KafkaTopicPartition[]): void {
    committer.forget(partitions);
    for (const tp of partitions) {
      const key = tpKey(tp);
      owned.add(key);
      // Paused by an earlier hold whose timer a revocation cleared: delivery starts again from
      // the committed offset, which is that held record.
      if (holds.has(key) && holds.get(key) === undefined && state === 'running') {
        holds.delete(key);
        try {
          consumer?.resume([tp]);
        } catch (error) {
          emit({ type: 'error', error });
        }
      }
    }
    emit({ type: 'assigned', partitions });
  }

  function onRevoked(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      const key = tpKey(tp);
      owned.delete(key);
      if (holds.has(key)) {
        clearTimeout(holds.get(key));
        holds.set(key, undefined);
      }
      inPlace.delete(key);
      settleStreak.delete(key);
    }
    committer.forget(partitions);
    emit({ type: 'revoked', partitions });
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    metrics: () => ({
      ...outcomes.snapshot(),
      ...counts,
      commits: committer.commits,
      pauses: breaker.trips,
    }),
    assignment: () => consumer?.assignment() ?? [],
    position: (tp) => committer.position(tp)?.toString(),
    flushCommits: () => committer.flush(),
    async lag() {
      admin ??= client.admin();
      const connected = await admin;
      const result: KafkaPartitionLag[] = [];
      for (const topic of [...routes.topics, ...routes.retry.map((tier) => tier.topic)]) {
        const [ends, committed] = await Promise.all([
          connected.topicOffsets(topic),
          connected.committedOffsets(routes.groupId, topic),
        ]);
        for (const { partition, start, end } of ends) {
          const tp = { topic, partition };
          const assigned = owned.has(tpKey(tp));
          const position =
            (assigned ? committer.position(tp)?.toString() : undefined) ??
            committed.get(partition) ??
            start;
          const lag = BigInt(end) - BigInt(position);
          result.push({
            topic,
            partition,
            position,
            end,
            lag: Number(lag > 0n ? lag : 0n),
            assigned,
          });
        }
      }
      return result;
    },
    async start() {
      if (state !== 'new') throw new Error(`a ${state} Kafka consumer runner cannot be started`);
      state = 'starting';
      try {
        producer =
          options.producer ??
          (await client.producer({
            acks: 'all',
            idempotent: true,
            ...(options.clientId !== undefined ? { clientId: options.clientId } : {}),
            timeoutMs: 10_000,
          }));
        consumer = client.consumer({
          groupId: routes.groupId,
          topics: [...routes.topics, ...routes.retry.map((tier) => tier.topic)],
          ...(options.clientId !== undefined ? { clientId: options.clientId } : {}),
          ...(options.sessionTimeoutMs !== undefined
            ? { sessionTimeoutMs: options.sessionTimeoutMs }
            : {}),
          ...(options.rebalanceTimeoutMs !== undefined
            ? { rebalanceTimeoutMs: options.rebalanceTimeoutMs }
            : {}),
          ...(options.partitionConcurrency !== undefined
            ? { partitionConcurrency: options.partitionConcurrency }
            : {}),
        });
        state = 'running';
        await consumer.start({
          onRecord,
          onAssigned,
          onRevoked,
          onError: (error) => emit({ type: 'error', error }),
        });
      } catch (error) {
        state = 'stopped';
        await consumer?.close().catch(() => undefined);
        if (ownsProducer) await producer?.close().catch(() => undefined);
        throw error;
      }
    },
    async stop() {
      if (state === 'stopped' || state === 'stopping') return;
      const wasStarted = state === 'running';
      state = 'stopping';
      breaker.stop();
      for (const timer of holds.values()) clearTimeout(timer);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      if (wasStarted) await committer.flush();
      committer.close();
      await consumer?.close().catch((error: unknown) => emit({ type: 'error', error }));
      if (ownsProducer)
        await producer?.close().catch((error: unknown) => emit({ type: 'error', error }));
      state = 'stopped';
    },
  };
}
