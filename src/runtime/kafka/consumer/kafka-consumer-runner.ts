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
 * The lifecycle, the work in flight, the breaker and the counters are the runner core's
 * (delivery/runner-core.ts); this file is Kafka's source (producer, group consumer, holds) and
 * kafka-settler.ts its settler.
 */
import {
  createDeliveryPipeline,
  type IdentifiedDelivery,
} from '../../delivery/delivery-pipeline.js';
import { MalformedMessageError } from '../../delivery/malformed-message-error.js';
import { parseDelivery } from '../../delivery/parse-delivery.js';
import { readConfluentFrame } from '../confluent-framing.js';
import type { AggregateHint, Delivery } from '../../delivery/delivery.js';
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
  KAFKA_CONSUMER_HEADERS as H,
  headerInteger,
  headerText,
  headerTime,
} from './consumer-headers.js';
import { KAFKA_HEADERS } from '../kafka-record.js';
import {
  KAFKA_MESSAGE_ID_HEADER,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
  type KafkaConsumerRunnerOptions,
} from './kafka-consumer-types.js';
import { createKafkaSettler, type HeldRecord } from './kafka-settler.js';
import { consumerLag } from './kafka-lag.js';
import { OffsetCommitter } from './offset-committer.js';
import { PartitionHolds, tpKey } from './partition-holds.js';

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
    messageLimits: options.messageLimits,
    classify: options.classify,
    now: options.now,
  });
  if (routes.topics.length === 0) throw new RangeError('routes.topics is empty');
  const tierByTopic = new Map(routes.retry.map((tier) => [tier.topic, tier]));
  for (const topic of routes.topics) {
    if (tierByTopic.has(topic) || topic === routes.deadLetter)
      throw new RangeError(`topic ${topic} is both an event topic and a retry/dead-letter topic`);
  }
  const now = options.now ?? Date.now;
  const counts = { retriedInPlace: 0, settleFailures: 0, commitFailures: 0 };
  let consumer: KafkaConsumer | undefined;
  let producer: KafkaProducer | undefined;
  let admin: Promise<KafkaAdmin> | undefined;
  let committer: OffsetCommitter | undefined;
  /** Records are taken (between the consumer's start and the stop): else they are held. */
  let taking = false;
  const inPlace = new Map<string, { offset: string; retries: number }>();
  const settleStreak = new Map<string, number>();

  const core: RunnerCore<KafkaConsumerRunnerEvent> = new RunnerCore<KafkaConsumerRunnerEvent>(
    {
      async open(signal) {
        holds.reset();
        inPlace.clear();
        settleStreak.clear();
        committer = new OffsetCommitter({
          commit: (offsets) => consumer!.commit(offsets),
          onError: (error) => {
            counts.commitFailures++;
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
        });
        taking = true;
        await consumer.start({
          onRecord,
          onAssigned,
          onRevoked,
          onError: (error) => emit({ type: 'error', error }),
        });
      },
      pause: (): void => holds.pauseAll(),
      async resume(): Promise<undefined> {
        holds.resumeAll();
        return undefined;
      },
      async quiesce() {
        taking = false;
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
        taking = false;
        if (consumer !== undefined) await committer?.flush();
        committer?.close();
        await consumer?.close().catch((error: unknown) => emit({ type: 'error', error }));
        consumer = undefined;
        if (options.producer === undefined)
          await producer?.close().catch((error: unknown) => emit({ type: 'error', error }));
        producer = undefined;
      },
    },
    { circuitBreaker: options.circuitBreaker, onEvent: options.onEvent },
  );
  const { breaker, counters, emit } = core;
  const holds: PartitionHolds = new PartitionHolds(
    () => consumer,
    () => taking && !breaker.isOpen,
    (error) => emit({ type: 'error', error }),
  );
  const hold = (record: KafkaInboundRecord, delayMs: number | undefined) =>
    holds.hold(record, delayMs);

  function settle(record: KafkaInboundRecord): void {
    const tp = { topic: record.topic, partition: record.partition };
    const key = tpKey(tp);
    if (inPlace.get(key)?.offset === record.offset) inPlace.delete(key);
    settleStreak.delete(key);
    // A record of a partition revoked meanwhile is not committed by this member.
    if (holds.owns(tp)) committer?.settled(tp, BigInt(record.offset) + 1n);
  }

  /** Each copy topic's `max.message.bytes`, read once (undefined: unknown, the default applies). */
  const copyLimits = new Map<string, Promise<number | undefined>>();
  async function topicMessageLimit(topic: string): Promise<number | undefined> {
    try {
      admin ??= client.admin();
      const [described] = await (await admin).describeTopics([topic]);
      // The topic's own setting, or the broker's message.max.bytes it inherits.
      const limit = Number(described?.configs['max.message.bytes']);
      return Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
    } catch {
      // No describe (ACLs, an admin-less client): a refused copy still falls back to minimal.
      return undefined;
    }
  }

  const settleFailure = createKafkaSettler({
    routes,
    consumer: handler.name,
    strictTypes: new Set(routes.strictEventTypes ?? []),
    strictBackoff: options.strictBackoff,
    settleBackoff: options.settleBackoff,
    counters,
    counts,
    inPlace,
    settleStreak,
    send: async (record) => {
      await producer!.send([record]);
    },
    copyLimit: (topic) => {
      let limit = copyLimits.get(topic);
      if (limit === undefined) {
        limit = topicMessageLimit(topic);
        copyLimits.set(topic, limit);
      }
      return limit;
    },
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
    if (!taking) {
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
    await core.inFlight.track(processRecord(record));
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
      // The copy's own due time, but never later than its tier's delay after it was written: a
      // forged or broken header cannot park a partition.
      const latest = Number(record.timestamp) + tier.delayMs;
      const dueAt = Math.min(headerTime(record.headers, H.retryDueAt) ?? latest, latest);
      const wait = dueAt - now();
      if (wait > 0) {
        const { topic, partition, offset } = record;
        emit({ type: 'waiting', topic, partition, offset, dueAt });
        hold(record, wait);
        return;
      }
    }
    const previous = inPlace.get(tpKey(record));
    const retriesInPlace = previous?.offset === record.offset ? previous.retries : 0;
    const firstAttempt = trusted ? Math.max(1, headerInteger(record.headers, H.attempt) ?? 1) : 1;
    const attempt = firstAttempt + retriesInPlace;
    const frame = readConfluentFrame(record.value);
    const delivery: Delivery = {
      body: frame?.data ?? record.value,
      messageId: headerText(record.headers, KAFKA_MESSAGE_ID_HEADER),
      eventType: headerText(record.headers, KAFKA_HEADERS.eventType),
      aggregate: aggregateHint(record),
      traceId: headerText(record.headers, KAFKA_HEADERS.traceId),
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
    const identified =
      frame === undefined ? undefined : await identifyFramed(frame.schemaId, delivery);
    await settleOutcome(
      await pipeline.process(delivery, identified),
      { record, trusted, attempt },
      settlement,
    );
  }

  /**
   * A framed record's envelope, parsed once, or why its schema id contradicts the envelope (see
   * `schemaIds`); undefined leaves it to the pipeline.
   */
  async function identifyFramed(
    schemaId: number,
    delivery: Delivery,
  ): Promise<IdentifiedDelivery | undefined> {
    if (options.schemaIds === undefined) return undefined;
    let registered;
    try {
      registered = await options.schemaIds.lookup(schemaId);
    } catch {
      return undefined; // registry unreachable: the envelope decides (see `schemaIds`)
    }
    if (registered === undefined) return undefined;
    let body: Record<string, unknown>;
    try {
      body = parseDelivery(
        delivery.body,
        delivery,
        options.messageLimits ?? {},
        'messageId header',
      );
    } catch (error) {
      return { error };
    }
    if (body.eventType === registered.eventType && body.schemaVersion === registered.version)
      return { body };
    return {
      error: new MalformedMessageError(
        `schema id ${schemaId} is ${registered.eventType} v${registered.version}, but the envelope says ${String(body.eventType)} v${String(body.schemaVersion)}`,
      ),
    };
  }

  function onAssigned(partitions: readonly KafkaTopicPartition[]): void {
    committer?.forget(partitions);
    holds.assigned(partitions, taking);
    emit({ type: 'assigned', partitions });
  }

  function onRevoked(partitions: readonly KafkaTopicPartition[]): void {
    holds.revoked(partitions);
    for (const tp of partitions) {
      inPlace.delete(tpKey(tp));
      settleStreak.delete(tpKey(tp));
    }
    committer?.forget(partitions);
    emit({ type: 'revoked', partitions });
  }

  const runner: KafkaConsumerRunner = {
    get state() {
      return core.state;
    },
    get inFlight() {
      return core.inFlight.size;
    },
    metrics: () => ({
      ...counters.snapshot(),
      ...counts,
      commits: committer?.commits ?? 0,
      pauses: breaker.trips,
    }),
    assignment: () => consumer?.assignment() ?? [],
    position: (tp) => committer?.position(tp)?.toString(),
    flushCommits: async () => committer?.flush(),
    async lag() {
      admin ??= client.admin();
      return consumerLag(
        await admin,
        routes,
        (tp) => holds.owns(tp),
        (tp) => committer?.position(tp)?.toString(),
      );
    },
    health: () => core.health(handler.name),
    start: () => core.start(),
    stop: () => core.stop(),
  };
  return runner;
}
