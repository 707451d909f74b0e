/**
 * Runs one consumer on its work queue with manual acks.
 *
 * For every delivery:
 *   - the body must be a JSON object with a `messageId`, equal to the AMQP messageId property
 *     when the producer set one; otherwise it goes straight to the dead queue (it can never succeed);
 *   - `handler.handle(body)` runs (normally the inbox-guarded consumer: inbox insert + business
 *     write in one transaction); the delivery is acked only after it resolved, i.e. committed;
 *   - a retryable failure publishes a copy (same body, messageId and headers, `x-evgen-attempt`
 *     + 1, failure times, last error) to the next delay tier, waits for its confirm, then acks;
 *   - a non-retryable failure, or one on the last attempt, publishes the message with its
 *     diagnostics to the dead queue, waits for the confirm, then acks;
 *   - deliveries of one aggregate run one after the other in delivery order (aggregate-lanes.ts),
 *     so concurrency never makes a later version overtake an earlier one; a real gap (an
 *     earlier version missing) parks the message on the first tier without using an attempt,
 *     for at most `gapWaitMs`;
 *   - a failure that says a dependency is unavailable (database down) puts the delivery back
 *     unchanged and stops consumption for a backoff (circuit-breaker.ts): no attempt is used.
 * Nothing else is ever nacked with requeue. Every copy is fitted to what can be encoded before it
 * is sent (copy-limits.ts: over-long properties and oversized headers dropped and named in
 * `x-evgen-cut`), so a message's content never makes a copy fail. A retry copy that cannot be
 * published becomes a dead letter; a dead letter that is refused is sent again with only evgen's
 * diagnostics and the received headers serialized. Only when the dead queue takes neither (broker
 * or topology trouble) does the delivery stay unacked and the channel restart, so the broker
 * redelivers it after a backoff.
 * Runner headers (`x-evgen-attempt`, …) count only on deliveries evgen itself sent back
 * (received-headers.ts).
 * A lost connection or channel is rebuilt with backoff; `stop()` lets in-flight handlers finish.
 */
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { type MessageBodyLimits } from '../decode-message-body.js';
import { describeError } from '../errors.js';
import { createDeliveryPipeline, type IdentifiedDelivery } from '../delivery/delivery-pipeline.js';
import type { Delivery } from '../delivery/delivery.js';
import {
  DeliveryCounters,
  type DeliveryCounts,
  type DeliveryOutcome,
} from '../delivery/delivery-outcome.js';
import {
  settleOutcome,
  type FailedOutcome,
  type OutcomeSettlement,
} from '../delivery/outcome-settlement.js';
import type { DeadLetterFacts } from '../delivery/failure.js';
import type { MessageHandler } from '../delivery/message-handler.js';
import type { DeliveryRunner } from '../delivery/delivery-runner.js';
import type { DeliveryEvent } from '../delivery/delivery-event.js';
import { safeObserver } from '../delivery/safe-observer.js';
import { AggregateLanes, aggregateKey } from './aggregate-lanes.js';
import { CircuitBreaker, type CircuitBreakerOptions } from '../delivery/circuit-breaker.js';
import {
  deadLetterCandidates,
  deadLetterHeaders,
  failureContext,
  type FailureContext,
} from './failure-headers.js';
import { EVGEN_HEADERS, headerString } from './amqp-message.js';
import { backoffDelay, type BackoffOptions } from '../backoff.js';
import { sleep } from '../sleep.js';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import {
  createAmqpConnector,
  DEFAULT_RECONNECT_BACKOFF,
  fixedConnector,
  isConnector,
  type AmqpConnector,
} from './connector.js';
import { trustedHeaders } from './received-headers.js';
import { tierForAttempt, type ConsumerRoutes } from './topology.js';

export type { MessageHandler } from '../delivery/message-handler.js';
export { parseDelivery } from '../delivery/parse-delivery.js';

/** The delivery core's events, plus the channel's restarts and gap waits. */
export type ConsumerRunnerEvent =
  | DeliveryEvent
  | { readonly type: 'consuming'; readonly queue: string }
  | {
      readonly type: 'restarting';
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: unknown;
    }
  | {
      readonly type: 'gap-wait';
      readonly messageId: string;
      readonly waitedMs: number;
      readonly delayMs: number;
    };

export interface ConsumerRunnerOptions {
  /**
   * A reconnecting connector, an AMQP URL (the runner then owns a reconnecting connection), or
   * an open connection the caller owns (no reconnect once it is lost).
   */
  readonly connection: AmqpConnector | ChannelModel | string;
  /** The consumer's queues, from `resolveTopology(...).consumers[name]` / `assertTopology`. */
  readonly routes: ConsumerRoutes;
  readonly handler: MessageHandler;
  /**
   * Unacked deliveries at a time. Default 20. Deliveries of one aggregate (same aggregateType and
   * aggregateId) are handled one after the other in delivery order; different aggregates run
   * concurrently, up to this many.
   */
  readonly prefetch?: number;
  /**
   * How long a message that arrives ahead of a missing version of its aggregate (`ctx.inOrder`'s
   * gap) waits for it, in ms (default 60 000): it is parked on the first delay tier with its
   * attempt unchanged. After that, gaps count as failed attempts like any retryable error.
   */
  readonly gapWaitMs?: number;
  /**
   * When the handler fails because a dependency is unavailable (`isUnavailableError`: database
   * connection lost or refused, UnavailableError), the delivery is put back unchanged and the
   * runner stops consuming for a backoff, then resumes (after `healthCheck`, if given).
   */
  readonly circuitBreaker?: CircuitBreakerOptions;
  /** Backoff between attempts to rebuild a lost channel or connection. */
  readonly reconnectBackoff?: BackoffOptions;
  /**
   * Largest body (`maxBytes`, default 1 MiB) and deepest nesting (`maxDepth`, default 64) accepted;
   * a message beyond them goes to the dead queue before it is parsed.
   */
  readonly messageLimits?: MessageBodyLimits;
  /** Observability hook; must not throw. */
  readonly onEvent?: (event: ConsumerRunnerEvent) => void;
}

/** Counts since the runner was created (retry and dead-letter counts, for metrics). */
export interface ConsumerRunnerMetrics extends DeliveryCounts {
  /** Retry copies or dead letters that were not confirmed (the delivery stays unacked and comes back). */
  readonly settleFailures: number;
  /** Channel or connection rebuilds started. */
  readonly restarts: number;
  /** Deliveries put back in the queue unchanged (dependency unavailable, breaker open). */
  readonly requeued: number;
  /** Times the circuit breaker stopped consumption. */
  readonly pauses: number;
  /** Messages parked ahead of a missing version (no attempt used). */
  readonly gapWaits: number;
}

/**
 * `start()` rejects if the first set-up fails (e.g. the queue does not exist); `stop()` waits for
 * in-flight handlers and their acks, then closes the channel.
 */
export type ConsumerRunner = DeliveryRunner<ConsumerRunnerMetrics>;

interface Session {
  readonly model: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmedPublisher;
  consumerTag?: string;
  ended: boolean;
}

/** A delivery being settled, on the session (channel) it arrived on. */
interface SessionDelivery {
  readonly current: Session;
  readonly message: ConsumeMessage;
  readonly delivery: Delivery;
}

/**
 * Per-aggregate lanes keep order at any prefetch, so the prefetch only bounds memory and work in
 * flight. 20 was chosen by measurement (`npm run bench -- rabbitmq`, runner + inbox consumer, 200
 * aggregates, pg pool of 10, medians of 3): relative to prefetch 20, prefetch 1 reached 0.10–0.32×,
 * 10 0.82–1.02×, 50 0.78–0.92×, 100 0.74–0.96× in three runs. Beyond ~20 the database pool (10
 * connections) is the limit, so a larger prefetch only holds more unacked messages.
 */
const DEFAULT_PREFETCH = 20;

/** The attempt a delivery is: `x-evgen-attempt`, 1 when absent or unreadable. */
export function deliveryAttempt(headers: Record<string, unknown> | undefined): number {
  const value = headers?.[EVGEN_HEADERS.attempt];
  const number =
    typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(number) && number >= 1 ? number : 1;
}

export function createConsumerRunner(options: ConsumerRunnerOptions): ConsumerRunner {
  const { routes, handler } = options;
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  const gapWaitMs = options.gapWaitMs ?? 60_000;
  if (!(gapWaitMs >= 0)) throw new RangeError('gapWaitMs must be a non-negative number');
  if (!Number.isInteger(prefetch) || prefetch < 1)
    throw new RangeError('prefetch must be a positive integer');
  const pipeline = createDeliveryPipeline({
    handler,
    consumer: routes.consumer,
    maxAttempts: routes.maxAttempts,
    ...(options.messageLimits !== undefined ? { messageLimits: options.messageLimits } : {}),
  });
  // A URL or a bare connection: the runner made the connector, so stop() closes it (a connector
  // over a bare connection leaves that connection open).
  const ownsConnector = typeof options.connection === 'string' || !isConnector(options.connection);
  const connector =
    typeof options.connection === 'string'
      ? createAmqpConnector({ url: options.connection, connectionName: `evgen ${handler.name}` })
      : isConnector(options.connection)
        ? options.connection
        : fixedConnector(options.connection);
  const emit = safeObserver(options.onEvent);

  const outcomes = new DeliveryCounters();
  const counts = {
    settleFailures: 0,
    restarts: 0,
    requeued: 0,
    gapWaits: 0,
  };
  const lanes = new AggregateLanes();
  const breaker = new CircuitBreaker(options.circuitBreaker ?? {}, {
    pause(error, delayMs) {
      emit({ type: 'paused', delayMs, error });
      const current = session;
      if (current === undefined || current.ended || current.consumerTag === undefined) return;
      const tag = current.consumerTag;
      current.consumerTag = undefined;
      void current.channel.cancel(tag).catch(() => undefined);
    },
    async resume() {
      const current = session;
      // No session: the restart loop opens one, and open() consumes once the breaker is closed.
      if (stopping || current === undefined || current.ended) return;
      if (current.consumerTag !== undefined) return;
      try {
        await consume(current);
        emit({ type: 'resumed' });
      } catch (error) {
        emit({ type: 'error', error });
      }
    },
  });
  const inFlight = new Set<Promise<void>>();
  let session: Session | undefined;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  // Restarts since the last settled delivery: a cause that survives a restart (say a deleted
  // retry exchange) backs off further each time instead of looping at the first delay.
  let restartStreak = 0;
  const stopSignal = new AbortController();

  async function open(): Promise<Session> {
    const model = await connector.connection();
    const channel = await model.createChannel();
    const current: Session = {
      model,
      channel,
      publisher: new ConfirmedPublisher(model),
      ended: false,
    };
    channel.on('error', (error: Error) => emit({ type: 'error', error }));
    channel.on('close', () => {
      current.ended = true;
      void current.publisher.close();
      if (session === current) {
        session = undefined;
        if (!stopping) restart(new Error('channel or connection closed'));
      }
    });
    try {
      await channel.prefetch(prefetch);
      // While the breaker is open the queue keeps its messages; it resumes consuming.
      if (!breaker.isOpen) await consume(current);
    } catch (error) {
      // Not consuming yet: the caller (start or the restart loop) decides what happens next.
      current.ended = true;
      await channel.close().catch(() => undefined);
      throw error;
    }
    if (current.ended) throw new Error(`channel closed while starting to consume ${routes.queue}`);
    // From here on a close of this channel triggers a restart.
    session = current;
    emit({ type: 'consuming', queue: routes.queue });
    return current;
  }

  async function consume(current: Session): Promise<void> {
    const reply = await current.channel.consume(
      routes.queue,
      (message) => onDelivery(current, message),
      { noAck: false },
    );
    current.consumerTag = reply.consumerTag;
  }

  function restart(error: unknown): void {
    if (stopping || restarting !== undefined) return;
    restartStreak++;
    counts.restarts++;
    const firstAttempt = restartStreak;
    restarting = (async () => {
      for (let attempt = firstAttempt; !stopping; attempt++) {
        const delayMs = backoffDelay(attempt, options.reconnectBackoff, DEFAULT_RECONNECT_BACKOFF);
        emit({ type: 'restarting', attempt, delayMs, error });
        await sleep(delayMs, stopSignal.signal);
        if (stopping) return;
        try {
          await open();
          return;
        } catch (openError) {
          error = openError;
        }
      }
    })().finally(() => {
      restarting = undefined;
    });
  }

  function onDelivery(current: Session, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (queue deleted or failed over): start again.
      if (session === current && !stopping) {
        session = undefined;
        current.ended = true;
        void current.channel.close().catch(() => undefined);
        restart(new Error(`consumer on ${routes.queue} was cancelled by the broker`));
      }
      return;
    }
    // Identified here, in delivery order, so the aggregate key is known before anything runs.
    const delivery = toDelivery(message);
    const identified = pipeline.identify(delivery);
    const key = identified.body !== undefined ? aggregateKey(identified.body) : undefined;
    const work = lanes
      .run(key, () => process(current, message, delivery, identified))
      .catch((error: unknown) => emit({ type: 'error', error }));
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  function toDelivery(message: ConsumeMessage): Delivery {
    const trusted = trustedHeaders(message);
    const attempt = deliveryAttempt(trusted);
    const messageId: unknown = message.properties.messageId;
    const type: unknown = message.properties.type;
    const traceId = headerString(trusted, EVGEN_HEADERS.traceId);
    return {
      body: message.content,
      ...(typeof messageId === 'string' && messageId !== '' ? { messageId } : {}),
      ...(typeof type === 'string' && type !== '' ? { eventType: type } : {}),
      ...(traceId !== undefined ? { traceId } : {}),
      attempt,
      facts: {
        transport: 'rabbitmq',
        queue: routes.queue,
        redelivered: attempt > 1 || message.fields.redelivered,
        headers: message.properties.headers ?? {},
      },
    };
  }

  const settlement: OutcomeSettlement<SessionDelivery> = {
    breaker,
    counters: outcomes,
    settle: ({ current, message }) => ack(current, message),
    putBack: ({ current, message }) => requeue(current, message),
    settleFailure,
    handled({ delivery }, outcome) {
      emit({
        type: 'handled',
        messageId: outcome.messageId,
        attempt: delivery.attempt,
        result: outcome.result,
      });
    },
    skipped(_, outcome) {
      emit({ type: 'skipped', messageId: outcome.messageId, eventType: outcome.eventType });
    },
  };

  function ack(current: Session, message: ConsumeMessage): void {
    // After a lost channel the delivery tag is void: the broker redelivers and the inbox absorbs it.
    if (current.ended) return;
    try {
      current.channel.ack(message);
      restartStreak = 0;
    } catch (error) {
      emit({ type: 'error', error });
    }
  }

  /** Puts a delivery back in the queue untouched (same headers, so no attempt is used up). */
  function requeue(current: Session, message: ConsumeMessage): void {
    if (current.ended) return;
    try {
      current.channel.nack(message, false, true);
      counts.requeued++;
    } catch (error) {
      emit({ type: 'error', error });
    }
  }

  async function process(
    current: Session,
    message: ConsumeMessage,
    delivery: Delivery,
    identified: IdentifiedDelivery,
  ): Promise<void> {
    // The breaker is open: the handler's dependency is down, leave the message in the queue.
    if (breaker.isOpen) {
      requeue(current, message);
      return;
    }
    const outcome = await pipeline.process(delivery, identified);
    await settleOutcome(outcome, { current, message, delivery }, settlement);
  }

  /** Carries a failure out: gap wait, retry tier or dead letter; unacked if none can be published. */
  async function settleFailure(
    { current, message, delivery }: SessionDelivery,
    outcome: FailedOutcome,
  ): Promise<void> {
    const attempt = delivery.attempt;
    const context = failureContext(message, outcome.letter.failure, outcome.messageId);
    let retryFailure: string | undefined;
    if (!context.carriesId && outcome.kind === 'retry') {
      // A copy would come back under another messageId: it can only be a dead letter.
      retryFailure = 'its messageId cannot be carried as an AMQP messageId property';
    } else {
      if (outcome.gap && (await sendGapWait(current, message, context))) return;
      if (outcome.kind === 'retry') {
        retryFailure = await sendRetryCopy(current, message, context, attempt, outcome);
        if (retryFailure === undefined) return;
      }
    }
    if (
      await sendDeadLetter(current, message, context, outcome.letter, outcome.error, retryFailure)
    )
      return;
    keepUnacked(current, message);
  }

  /**
   * A message ahead of a missing version of its aggregate waits on the first delay tier, attempt
   * unchanged, until `gapWaitMs` after it first found the gap; later gaps count as attempts.
   * Resolves false when the wait is over (or the copy could not be published).
   */
  async function sendGapWait(
    current: Session,
    message: ConsumeMessage,
    context: FailureContext,
  ): Promise<boolean> {
    const since = headerString(trustedHeaders(message), EVGEN_HEADERS.gapSince) ?? context.now;
    const waitedMs = Date.parse(context.now) - Date.parse(since);
    if (!(waitedMs < gapWaitMs)) return false;
    const tier = tierForAttempt(routes, 1);
    const attempt = deliveryAttempt(trustedHeaders(message));
    const headers = {
      ...context.received,
      ...context.common,
      [EVGEN_HEADERS.attempt]: attempt,
      [EVGEN_HEADERS.gapSince]: since,
    };
    try {
      await current.publisher.publish(
        routes.retryExchange,
        tier.routingKey,
        message.content,
        context.properties(headers),
      );
    } catch (publishError) {
      counts.settleFailures++;
      emit({ type: 'error', error: publishError });
      return false;
    }
    ack(current, message);
    counts.gapWaits++;
    emit({ type: 'gap-wait', messageId: context.messageId!, waitedMs, delayMs: tier.delayMs });
    return true;
  }

  /** Next delay tier, attempt + 1. Resolves undefined when sent, else why it could not be. */
  async function sendRetryCopy(
    current: Session,
    message: ConsumeMessage,
    context: FailureContext,
    attempt: number,
    outcome: Extract<DeliveryOutcome, { kind: 'retry' }>,
  ): Promise<string | undefined> {
    const tier = tierForAttempt(routes, attempt);
    const headers = {
      ...context.received,
      ...context.common,
      [EVGEN_HEADERS.attempt]: attempt + 1,
    };
    try {
      await current.publisher.publish(
        routes.retryExchange,
        tier.routingKey,
        message.content,
        context.properties(headers),
      );
      ack(current, message);
      outcomes.settled(outcome);
      emit({
        type: 'retried',
        messageId: outcome.messageId,
        attempt,
        delayMs: tier.delayMs,
        error: outcome.error,
      });
      return undefined;
    } catch (publishError) {
      // No retry copy: the message goes to the dead queue instead (replayable), never round
      // and round through redeliveries.
      counts.settleFailures++;
      emit({ type: 'error', error: publishError });
      return describeError(publishError).message;
    }
  }

  /** The dead queue, full letter first, minimal one second. Resolves whether one was confirmed. */
  async function sendDeadLetter(
    current: Session,
    message: ConsumeMessage,
    context: FailureContext,
    letter: DeadLetterFacts,
    error: unknown,
    retryFailure: string | undefined,
  ): Promise<boolean> {
    const errorMessage =
      retryFailure === undefined
        ? context.errorMessage
        : `${context.errorMessage} (its retry copy could not be published: ${retryFailure})`;
    const diagnostics = deadLetterHeaders(context, letter, errorMessage);
    for (const properties of deadLetterCandidates(context, message, diagnostics)) {
      try {
        await current.publisher.publish(
          routes.retryExchange,
          routes.deadRoutingKey,
          message.content,
          properties,
        );
        ack(current, message);
        outcomes.deadLettered++;
        emit({
          type: 'dead-lettered',
          messageId: context.messageId,
          attempts: letter.attempts,
          error,
        });
        return true;
      } catch (publishError) {
        counts.settleFailures++;
        emit({ type: 'error', error: publishError });
      }
    }
    return false;
  }

  /**
   * The dead queue cannot take it (broker or topology trouble, not this message): keep the
   * delivery unacked and rebuild the channel so the broker redelivers it after a backoff.
   */
  function keepUnacked(current: Session, _message: ConsumeMessage): void {
    if (current.ended) return;
    current.ended = true;
    if (session === current) session = undefined;
    void current.channel.close().catch(() => undefined);
    restart(new Error(`no dead letter confirmed for a delivery on ${routes.queue}`));
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    metrics: () => ({ ...outcomes.snapshot(), ...counts, pauses: breaker.trips }),
    async start() {
      if (stopping) throw new Error('a stopped consumer runner cannot be started again');
      if (session !== undefined) return;
      await open();
    },
    async stop() {
      stopping = true;
      breaker.stop();
      stopSignal.abort();
      await restarting;
      const current = session;
      if (current !== undefined && current.consumerTag !== undefined && !current.ended) {
        await current.channel.cancel(current.consumerTag).catch(() => undefined);
      }
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      session = undefined;
      if (current !== undefined) {
        current.ended = true;
        await current.publisher.close();
        await current.channel.close().catch(() => undefined);
      }
      if (ownsConnector) await connector.close();
    },
  };
}
