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
 * Nothing else is ever nacked with requeue. A retry copy that cannot be published becomes a dead
 * letter; a dead letter that is refused is sent again with only evgen's diagnostics and the
 * received headers serialized (always encodable). Only when the dead queue takes neither does the
 * delivery stay unacked and the channel restart, so the broker redelivers it after a backoff.
 * Runner headers (`x-evgen-attempt`, …) count only on deliveries evgen itself sent back
 * (received-headers.ts).
 * A lost connection or channel is rebuilt with backoff; `stop()` lets in-flight handlers finish.
 */
import type { Channel, ChannelModel, ConsumeMessage, MessageProperties } from 'amqplib';
import {
  decodeMessageBody,
  MessageBodyError,
  messageBodyLimits,
  type MessageBodyLimits,
} from '../decode-message-body.js';
import { classifyError, describeError, isUnavailableError } from '../errors.js';
import { AggregateLanes, aggregateKey } from './aggregate-lanes.js';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
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
import { MalformedMessageError } from './errors.js';
import { trustedHeaders } from './received-headers.js';
import { traceProcess } from '../telemetry.js';
import { tierForAttempt, type ConsumerRoutes } from './topology.js';

/**
 * What the runner calls per message. Generated inbox-guarded consumers fit it: `handle` resolves
 * once the inbox transaction committed (`'handled'` or `'duplicate'`) and rejects with an error
 * whose `retryable: boolean` says whether to retry; errors without it are classified by
 * `classifyError`.
 */
export interface MessageHandler {
  /** Consumer name, recorded in dead letters. */
  readonly name: string;
  handle(raw: unknown): Promise<unknown>;
}

export type ConsumerRunnerEvent =
  | { readonly type: 'consuming'; readonly queue: string }
  | {
      readonly type: 'handled';
      readonly messageId: string;
      readonly attempt: number;
      readonly result: unknown;
    }
  | {
      readonly type: 'retried';
      readonly messageId: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: unknown;
    }
  | {
      readonly type: 'dead-lettered';
      readonly messageId: string | undefined;
      readonly attempts: number;
      readonly error: unknown;
    }
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
    }
  | { readonly type: 'paused'; readonly delayMs: number; readonly error: unknown }
  | { readonly type: 'resumed' }
  | { readonly type: 'error'; readonly error: unknown };

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
export interface ConsumerRunnerMetrics {
  /** Deliveries whose handler resolved (and that were acked), duplicates included. */
  readonly handled: number;
  /** Of those, the ones the handler reported as `'duplicate'` (the inbox had them already). */
  readonly duplicates: number;
  /** Retry copies confirmed on a delay tier. */
  readonly retried: number;
  /** Dead letters confirmed on the dead queue. */
  readonly deadLettered: number;
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

export interface ConsumerRunner {
  /** Connects and starts consuming; rejects if the first set-up fails (e.g. the queue does not exist). */
  start(): Promise<void>;
  /** Stops taking deliveries, waits for in-flight handlers (and their acks), then closes. */
  stop(): Promise<void>;
  /** Messages currently being handled. */
  readonly inFlight: number;
  metrics(): ConsumerRunnerMetrics;
}

interface Session {
  readonly model: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmedPublisher;
  consumerTag?: string;
  ended: boolean;
}

/**
 * Per-aggregate lanes keep order at any prefetch, so the prefetch only bounds memory and work in
 * flight. 20 was chosen by measurement (`npm run bench -- rabbitmq`, runner + inbox consumer, 200
 * aggregates, pg pool of 10, medians of 3): relative to prefetch 20, prefetch 1 reached 0.10–0.32×,
 * 10 0.82–1.02×, 50 0.78–0.92×, 100 0.74–0.96× in three runs. Beyond ~20 the database pool (10
 * connections) is the limit, so a larger prefetch only holds more unacked messages.
 */
const DEFAULT_PREFETCH = 20;

type Parsed =
  | { readonly body: Record<string, unknown>; readonly error?: undefined }
  | { readonly body?: undefined; readonly error: unknown };

/** `ctx.inOrder` found an earlier version missing (AggregateVersionGapError, possibly wrapped). */
function isGapError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, causeType } = error as { code?: unknown; causeType?: unknown };
  return code === 'AggregateVersionGapError' || causeType === 'AggregateVersionGapError';
}

function isRetryable(error: unknown): boolean {
  const flag =
    typeof error === 'object' && error !== null
      ? (error as { retryable?: unknown }).retryable
      : undefined;
  return typeof flag === 'boolean' ? flag : classifyError(error) === 'retryable';
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The `messageId` inside a JSON body, if it has one (best effort, for messages that failed parsing checks). */
function bodyMessageId(content: Buffer, limits: MessageBodyLimits): string | undefined {
  try {
    const body: unknown = decodeMessageBody(content, limits);
    return typeof body === 'object' && body !== null
      ? nonEmptyString((body as { messageId?: unknown }).messageId)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The attempt a delivery is: `x-evgen-attempt`, 1 when absent or unreadable. */
export function deliveryAttempt(headers: Record<string, unknown> | undefined): number {
  const value = headers?.[EVGEN_HEADERS.attempt];
  const number =
    typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(number) && number >= 1 ? number : 1;
}

/**
 * Decodes a delivery's body within the message limits (`decodeMessageBody`) and checks it against
 * its properties; throws MalformedMessageError with the reason.
 */
export function parseDelivery(
  content: Buffer,
  properties: Pick<MessageProperties, 'messageId'>,
  limits: MessageBodyLimits = {},
): Record<string, unknown> {
  let body: unknown;
  try {
    body = decodeMessageBody(content, limits);
  } catch (error) {
    if (error instanceof MessageBodyError) throw new MalformedMessageError(error.message);
    throw error;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new MalformedMessageError('body is not a JSON object (an evgen envelope)');
  const bodyId = (body as { messageId?: unknown }).messageId;
  if (typeof bodyId !== 'string' || bodyId === '')
    throw new MalformedMessageError('body has no messageId');
  // A producer that is not evgen may leave the property out: then the body's messageId stands.
  // Only two ids that disagree make the message unusable.
  const propertyId: unknown = properties.messageId;
  if (typeof propertyId === 'string' && propertyId !== '' && propertyId !== bodyId)
    throw new MalformedMessageError(
      `messageId property ${propertyId} differs from body messageId ${bodyId}`,
    );
  return body as Record<string, unknown>;
}

export function createConsumerRunner(options: ConsumerRunnerOptions): ConsumerRunner {
  const { routes, handler } = options;
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  const gapWaitMs = options.gapWaitMs ?? 60_000;
  if (!(gapWaitMs >= 0)) throw new RangeError('gapWaitMs must be a non-negative number');
  if (!Number.isInteger(prefetch) || prefetch < 1)
    throw new RangeError('prefetch must be a positive integer');
  const limits = messageBodyLimits(options.messageLimits);
  // A URL or a bare connection: the runner made the connector, so stop() closes it (a connector
  // over a bare connection leaves that connection open).
  const ownsConnector = typeof options.connection === 'string' || !isConnector(options.connection);
  const connector =
    typeof options.connection === 'string'
      ? createAmqpConnector({ url: options.connection, connectionName: `evgen ${handler.name}` })
      : isConnector(options.connection)
        ? options.connection
        : fixedConnector(options.connection);
  const emit = (event: ConsumerRunnerEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer must not break message handling.
    }
  };

  const counts = {
    handled: 0,
    duplicates: 0,
    retried: 0,
    deadLettered: 0,
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
    // Parsed here, in delivery order, so the aggregate key is known before anything runs.
    let parsed: Parsed;
    try {
      parsed = { body: parseDelivery(message.content, message.properties, limits) };
    } catch (error) {
      parsed = { error };
    }
    const key = parsed.body !== undefined ? aggregateKey(parsed.body) : undefined;
    const work = lanes
      .run(key, () => process(current, message, parsed))
      .catch((error: unknown) => emit({ type: 'error', error }));
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

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

  async function process(current: Session, message: ConsumeMessage, parsed: Parsed): Promise<void> {
    const attempt = deliveryAttempt(trustedHeaders(message));
    // The breaker is open: the handler's dependency is down, leave the message in the queue.
    if (breaker.isOpen) {
      requeue(current, message);
      return;
    }
    const body = parsed.body;
    if (body === undefined) {
      await settleFailure(current, message, attempt, parsed.error, undefined);
      return;
    }
    try {
      const result = await traceProcess(
        message.properties.headers,
        {
          messageId: String(body.messageId),
          eventType: String(body.eventType),
          system: 'rabbitmq',
          consumer: routes.consumer,
        },
        () => handler.handle(body),
      );
      ack(current, message);
      breaker.succeeded();
      counts.handled++;
      if (result === 'duplicate') counts.duplicates++;
      emit({ type: 'handled', messageId: body.messageId as string, attempt, result });
    } catch (error) {
      if (isUnavailableError(error)) {
        // Infrastructure, not the message: no attempt is used, consumption pauses.
        requeue(current, message);
        breaker.trip(error);
        return;
      }
      await settleFailure(current, message, attempt, error, body);
    }
  }

  /** Routes a failed delivery: gap wait, retry tier or dead letter; unacked if none can be published. */
  async function settleFailure(
    current: Session,
    message: ConsumeMessage,
    attempt: number,
    error: unknown,
    body: Record<string, unknown> | undefined,
  ): Promise<void> {
    const messageId =
      nonEmptyString(message.properties.messageId) ?? bodyMessageId(message.content, limits);
    const context = failureContext(message, error, messageId);
    if (body !== undefined && isGapError(error) && (await sendGapWait(current, message, context)))
      return;
    let retryFailure: string | undefined;
    if (body !== undefined && isRetryable(error) && attempt < routes.maxAttempts) {
      retryFailure = await sendRetryCopy(current, message, context, attempt, error);
      if (retryFailure === undefined) return;
    }
    if (await sendDeadLetter(current, message, context, attempt, error, body, retryFailure)) return;
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
    error: unknown,
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
      counts.retried++;
      emit({
        type: 'retried',
        messageId: context.messageId!,
        attempt,
        delayMs: tier.delayMs,
        error,
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
    attempt: number,
    error: unknown,
    body: Record<string, unknown> | undefined,
    retryFailure: string | undefined,
  ): Promise<boolean> {
    const traceId =
      headerString(context.received, EVGEN_HEADERS.traceId) ??
      (typeof body?.traceId === 'string' ? body.traceId : undefined);
    const errorMessage =
      retryFailure === undefined
        ? context.errorMessage
        : `${context.errorMessage} (its retry copy could not be published: ${retryFailure})`;
    const diagnostics = deadLetterHeaders(context, attempt, handler.name, traceId, errorMessage);
    for (const letter of deadLetterCandidates(context, message, diagnostics)) {
      try {
        await current.publisher.publish(
          routes.retryExchange,
          routes.deadRoutingKey,
          message.content,
          letter,
        );
        ack(current, message);
        counts.deadLettered++;
        emit({ type: 'dead-lettered', messageId: context.messageId, attempts: attempt, error });
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
    metrics: () => ({ ...counts, pauses: breaker.trips }),
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
