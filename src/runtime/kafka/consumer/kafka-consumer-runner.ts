/**
 * Runs one inbox-guarded consumer on Kafka (any adapter of the transport interface).
 *
 * Per partition the adapter hands records over one at a time in offset order; partitions run
 * concurrently, and within a partition records of different keys do too (partition-lanes.ts: up
 * to `partitionConcurrency` records per partition, a key's records one after the other in offset
 * order). For each record:
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
 * The lifecycle, the work in flight, the breaker and the counters are the runner core's
 * (delivery/runner-core.ts); this file is Kafka's source (producer, group consumer, holds),
 * kafka-delivery.ts turns a record into a delivery, retry-copy.ts reads a retry copy's attempt
 * and due time, partition-holds.ts and partition-retries.ts keep what is known per partition,
 * kafka-settler.ts is its settler and kafka-consumer-options.ts resolves its options.
 */
import { createDeliveryPipeline } from '../../delivery/delivery-pipeline.js';
import { settleOutcome, type OutcomeSettlement } from '../../delivery/outcome-settlement.js';
import { RunnerCore } from '../../delivery/runner-core.js';
import type {
  KafkaAdmin,
  KafkaConsumer,
  KafkaInboundRecord,
  KafkaProducer,
  KafkaTopicPartition,
} from '../kafka-client.js';
import {
  resolveKafkaConsumerRunnerOptions,
  type KafkaConsumerRunnerOptions,
} from './kafka-consumer-options.js';
import type { KafkaConsumerRunner, KafkaConsumerRunnerEvent } from './kafka-consumer-types.js';
import { identifyFramed, KAFKA_MESSAGE_ID_HINT, kafkaDelivery } from './kafka-delivery.js';
import { createKafkaSettler, type HeldRecord } from './kafka-settler.js';
import { consumerLag } from './kafka-lag.js';
import { OffsetCommitter } from './offset-committer.js';
import { PartitionHolds } from './partition-holds.js';
import { PartitionLanes } from './partition-lanes.js';
import { PartitionRetries } from './partition-retries.js';
import { copyAttempt, copyDueAt } from './retry-copy.js';
import { topicMessageLimits } from './topic-message-limits.js';

export function createKafkaConsumerRunner(given: KafkaConsumerRunnerOptions): KafkaConsumerRunner {
  const options = resolveKafkaConsumerRunnerOptions(given);
  const { routes, handler, client, tierByTopic, now, random, timers } = options;
  const pipeline = createDeliveryPipeline({
    ...options,
    consumer: routes.consumer,
    messageIdHint: KAFKA_MESSAGE_ID_HINT,
  });
  let lastFetchAt: number | undefined;
  let consumer: KafkaConsumer | undefined;
  let producer: KafkaProducer | undefined;
  let admin: Promise<KafkaAdmin> | undefined;
  let committer: OffsetCommitter | undefined;
  const retries = new PartitionRetries();
  /** Records are taken until a stop is asked for; then they are held for the next owner. */
  const taking = (): boolean => !core.signal.aborted;

  const core: RunnerCore<KafkaConsumerRunnerEvent, typeof COUNTS> = new RunnerCore(
    {
      async open(signal) {
        holds.reset();
        retries.clear();
        committer = new OffsetCommitter({
          commit: (offsets) => consumer!.commit(offsets),
          minIntervalMs: options.commitIntervalMs,
          timers,
          onError: (error) => {
            core.counts.commitFailures++;
            emit({ type: 'commit-failed', error });
          },
        });
        producer =
          options.producer ??
          (await client.producer({
            acks: 'all',
            idempotent: true,
            clientId: options.clientId,
            timeoutMs: 10_000,
          }));
        if (signal.aborted) return;
        consumer = client.consumer({
          groupId: routes.groupId,
          topics: [...routes.topics, ...routes.retry.map((tier) => tier.topic)],
          clientId: options.clientId,
          sessionTimeoutMs: options.sessionTimeoutMs,
          rebalanceTimeoutMs: options.rebalanceTimeoutMs,
          partitionConcurrency: options.partitionConcurrency,
          timers: options.timers,
        });
        await consumer.start({
          onRecord,
          onAssigned,
          onRevoked,
          onError: (error) => emit({ type: 'error', error }),
          onFetch() {
            core.counts.fetches++;
            lastFetchAt = now();
          },
        });
      },
      pause: (): void => holds.pauseAll(),
      async resume(): Promise<undefined> {
        holds.resumeAll();
        return undefined;
      },
      async quiesce() {
        holds.clearTimers();
      },
      async healthFacts() {
        const partitionsAssigned = consumer?.assignment().length ?? 0;
        if (consumer === undefined) return { partitionsAssigned };
        const partitions = await runner.lag();
        return {
          partitionsAssigned,
          lag: partitions.reduce((total, partition) => total + partition.lag, 0),
        };
      },
      async close() {
        if (consumer !== undefined) await committer?.flush();
        committer?.close();
        await consumer?.close().catch((error: unknown) => emit({ type: 'error', error }));
        consumer = undefined;
        if (options.producer === undefined)
          await producer?.close().catch((error: unknown) => emit({ type: 'error', error }));
        producer = undefined;
      },
    },
    { ...options, counts: COUNTS },
  );
  const { breaker, counters, emit } = core;
  const holds: PartitionHolds = new PartitionHolds(
    () => consumer,
    () => taking() && !breaker.isOpen,
    (error) => emit({ type: 'error', error }),
    timers,
  );
  const lanes = new PartitionLanes(options.partitionConcurrency ?? DEFAULT_RECORDS_PER_PARTITION);
  const hold = (record: KafkaInboundRecord, delayMs: number | undefined) => {
    lanes.held(record, record.offset);
    holds.hold(record, delayMs);
  };

  function settle(record: KafkaInboundRecord): void {
    const tp = { topic: record.topic, partition: record.partition };
    retries.settled(record);
    // A record of a partition revoked meanwhile is not committed by this member.
    if (holds.owns(tp)) committer?.settled(tp, BigInt(record.offset) + 1n);
  }

  const adminClient = (): Promise<KafkaAdmin> => (admin ??= client.admin());
  const settleFailure = createKafkaSettler({
    routes,
    consumer: handler.name,
    strictTypes: new Set(routes.strictEventTypes ?? []),
    strictBackoff: options.strictBackoff,
    settleBackoff: options.settleBackoff,
    counters,
    random,
    counts: core.counts,
    retries,
    send: async (record) => {
      await producer!.send([record]);
    },
    copyLimit: topicMessageLimits(adminClient),
    settle,
    hold,
    emit,
  });

  const position = ({ record }: HeldRecord) => ({
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
  });
  const settlement: OutcomeSettlement<HeldRecord> = {
    breaker,
    counters,
    settle: ({ record }) => settle(record),
    // Every partition pauses with the breaker; this record is read again on resume.
    putBack: ({ record }) => hold(record, undefined),
    settleFailure,
    handled(held, { messageId, result }) {
      emit({ type: 'handled', messageId, attempt: held.attempt, result, ...position(held) });
    },
    skipped(held, { messageId, eventType }) {
      emit({ type: 'skipped', messageId, eventType, ...position(held) });
    },
  };

  async function onRecord(record: KafkaInboundRecord): Promise<void> {
    if (!taking()) {
      // Stopping: leave the record for the next owner.
      hold(record, undefined);
      return;
    }
    if (holds.owns(record)) {
      // Records the client skipped come first: seek back to them (the committer never commits
      // past them either way).
      const missing = committer!.received(record, BigInt(record.offset));
      if (missing !== undefined) {
        hold({ ...record, offset: missing.toString() }, 0);
        return;
      }
    }
    const ticket = await lanes.enter(record);
    // Returns once the record is in its lane: the adapter hands over the next one meanwhile. In
    // flight (what stop() waits for) from here, as a record handed over always was; one whose
    // turn comes after a hold sent it again is left (not settled) for its redelivery.
    void core.inFlight.track(
      ticket.turn
        .then(() => (ticket.overtaken() ? undefined : processRecord(record)))
        .catch((error: unknown) => emit({ type: 'error', error }))
        .finally(() => ticket.leave()),
    );
  }

  async function processRecord(record: KafkaInboundRecord): Promise<void> {
    // The database is down: leave the record where it is, it is read again on resume.
    if (breaker.isOpen) {
      hold(record, undefined);
      return;
    }
    const tier = tierByTopic.get(record.topic);
    const trusted = tier !== undefined;
    if (tier !== undefined) {
      const dueAt = copyDueAt(record, tier);
      const wait = dueAt - now();
      if (wait > 0) {
        const { topic, partition, offset } = record;
        emit({ type: 'waiting', topic, partition, offset, dueAt });
        hold(record, wait);
        return;
      }
    }
    const attempt = copyAttempt(record, trusted) + retries.inPlace(record);
    const { delivery, schemaId } = kafkaDelivery(record, attempt);
    const identified =
      schemaId === undefined || options.schemaIds === undefined
        ? undefined
        : await identifyFramed(options.schemaIds, schemaId, delivery, options.messageLimits);
    await settleOutcome(
      await pipeline.process(delivery, identified),
      { record, trusted, attempt },
      settlement,
    );
  }

  function onAssigned(partitions: readonly KafkaTopicPartition[]): void {
    committer?.forget(partitions);
    holds.assigned(partitions, taking());
    emit({ type: 'assigned', partitions });
  }

  function onRevoked(partitions: readonly KafkaTopicPartition[]): void {
    holds.revoked(partitions);
    retries.forget(partitions);
    committer?.forget(partitions);
    emit({ type: 'revoked', partitions });
  }

  const runner = core.runner<KafkaConsumerRunner>(
    handler.name,
    () => ({
      ...core.metrics(),
      commits: committer?.commits ?? 0,
      ...(lastFetchAt === undefined ? {} : { lastFetchAt }),
    }),
    {
      assignment: () => consumer?.assignment() ?? [],
      position: (tp) => committer?.position(tp)?.toString(),
      flushCommits: async () => committer?.flush(),
      async lag() {
        return consumerLag(
          await adminClient(),
          routes,
          (tp) => holds.owns(tp),
          (tp) => committer?.position(tp)?.toString(),
        );
      },
    },
  );
  return runner;
}

/** Records of one partition in flight at once when `partitionConcurrency` is not given. */
const DEFAULT_RECORDS_PER_PARTITION = 8;

/** The transport's own counts, beside the delivery counters (see KafkaConsumerRunnerMetrics). */
const COUNTS = { retriedInPlace: 0, settleFailures: 0, commitFailures: 0, fetches: 0 };
