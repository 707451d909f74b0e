/**
 * Runs one consumer on its work queue with manual acks (design notes §2, §5; seed 001 §5–7).
 *
 * For every delivery:
 *   - the body must be a JSON object with a `messageId`, equal to the AMQP messageId property
 *     when the producer set one; otherwise it goes straight to the dead queue (it can never succeed);
 *   - `handler.handle(body)` runs (normally the inbox-guarded consumer: inbox insert + business
 *     write in one transaction); the delivery is acked only after it resolved, i.e. committed;
 *   - a retryable failure publishes a copy (same body, messageId and headers, `x-evgen-attempt`
 *     + 1, failure times, last error) to the next delay tier, waits for its confirm, then acks;
 *   - a non-retryable failure, or one on the last attempt, publishes the message with its
 *     diagnostics to the dead queue, waits for the confirm, then acks.
 * Nothing is ever nacked with requeue. A retry copy that cannot be published becomes a dead
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
import { classifyError, describeError } from '../errors.js';
import {
  copyPublishProperties,
  EVGEN_HEADERS,
  headerString,
  type PublishProperties,
} from './amqp-message.js';
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import {
  createAmqpConnector,
  fixedConnector,
  isConnector,
  type AmqpConnector,
} from './connector.js';
import { MalformedMessageError } from './errors.js';
import {
  copyableHeaders,
  serializeHeaders,
  trustedHeaders,
  UNENCODABLE_HEADERS,
} from './received-headers.js';
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
  /** Unacked deliveries (= concurrent handlers) at a time. Default 10. */
  readonly prefetch?: number;
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

/** Counts since the runner was created (design notes §8: retry and dead-letter counts). */
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

const MAX_ERROR_TEXT = 2_000;

interface Session {
  readonly model: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmedPublisher;
  consumerTag?: string;
  ended: boolean;
}

function truncate(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}…`;
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

/** Properties of a last-resort dead letter: the messageId and the given headers, nothing received. */
function minimalProperties(
  messageId: string | undefined,
  headers: Record<string, unknown>,
): PublishProperties {
  return copyPublishProperties({ messageId } as MessageProperties, headers);
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
  const prefetch = options.prefetch ?? 10;
  if (!Number.isInteger(prefetch) || prefetch < 1)
    throw new RangeError('prefetch must be a positive integer');
  const limits = messageBodyLimits(options.messageLimits);
  const ownsConnector = typeof options.connection === 'string';
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
  };
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
      const reply = await channel.consume(routes.queue, (message) => onDelivery(current, message), {
        noAck: false,
      });
      current.consumerTag = reply.consumerTag;
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

  function restart(error: unknown): void {
    if (stopping || restarting !== undefined) return;
    restartStreak++;
    counts.restarts++;
    const firstAttempt = restartStreak;
    restarting = (async () => {
      for (let attempt = firstAttempt; !stopping; attempt++) {
        const delayMs = backoffDelay(attempt, options.reconnectBackoff);
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
    const work = process(current, message).catch((error: unknown) =>
      emit({ type: 'error', error }),
    );
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

  async function process(current: Session, message: ConsumeMessage): Promise<void> {
    const attempt = deliveryAttempt(trustedHeaders(message));
    let body: Record<string, unknown>;
    try {
      body = parseDelivery(message.content, message.properties, limits);
    } catch (error) {
      await settleFailure(current, message, attempt, error, undefined);
      return;
    }
    try {
      const result = await handler.handle(body);
      ack(current, message);
      counts.handled++;
      if (result === 'duplicate') counts.duplicates++;
      emit({ type: 'handled', messageId: body.messageId as string, attempt, result });
    } catch (error) {
      await settleFailure(current, message, attempt, error, body);
    }
  }

  async function settleFailure(
    current: Session,
    message: ConsumeMessage,
    attempt: number,
    error: unknown,
    body: Record<string, unknown> | undefined,
  ): Promise<void> {
    const now = new Date().toISOString();
    const described = describeError(error);
    // Wrapping errors (the inbox's InboxHandlerError) name the original failure's type.
    const causeType =
      typeof error === 'object' && error !== null
        ? (error as { causeType?: unknown }).causeType
        : undefined;
    const errorType = typeof causeType === 'string' ? causeType : described.type;
    // Producer-set runner headers are ignored; unencodable ones travel serialized.
    const received = copyableHeaders(message);
    const firstFailureAt = headerString(received, EVGEN_HEADERS.firstFailureAt) ?? now;
    const originalExchange =
      headerString(received, EVGEN_HEADERS.originalExchange) ?? message.fields.exchange;
    const originalRoutingKey =
      headerString(received, EVGEN_HEADERS.originalRoutingKey) ?? message.fields.routingKey;
    const common = {
      ...received,
      [EVGEN_HEADERS.firstFailureAt]: firstFailureAt,
      [EVGEN_HEADERS.lastFailureAt]: now,
      [EVGEN_HEADERS.lastErrorType]: errorType,
      [EVGEN_HEADERS.lastError]: truncate(described.message),
      [EVGEN_HEADERS.originalExchange]: originalExchange,
      [EVGEN_HEADERS.originalRoutingKey]: originalRoutingKey,
    };
    // The property when present; else the body's own id, so a dead letter never gets a new one.
    const messageId =
      nonEmptyString(message.properties.messageId) ?? bodyMessageId(message.content, limits);
    const properties = (headers: Record<string, unknown>) =>
      copyPublishProperties(
        messageId !== undefined ? { ...message.properties, messageId } : message.properties,
        headers,
      );
    let retryFailure: string | undefined;
    if (body !== undefined && isRetryable(error) && attempt < routes.maxAttempts) {
      const tier = tierForAttempt(routes, attempt);
      const headers = { ...common, [EVGEN_HEADERS.attempt]: attempt + 1 };
      try {
        await current.publisher.publish(
          routes.retryExchange,
          tier.routingKey,
          message.content,
          properties(headers),
        );
        ack(current, message);
        counts.retried++;
        emit({ type: 'retried', messageId: messageId!, attempt, delayMs: tier.delayMs, error });
        return;
      } catch (publishError) {
        // No retry copy: the message goes to the dead queue instead (replayable), never round
        // and round through redeliveries.
        counts.settleFailures++;
        emit({ type: 'error', error: publishError });
        retryFailure = describeError(publishError).message;
      }
    }
    const traceId =
      headerString(received, EVGEN_HEADERS.traceId) ??
      (typeof body?.traceId === 'string' ? body.traceId : undefined);
    const errorMessage = truncate(
      retryFailure === undefined
        ? described.message
        : `${described.message} (its retry copy could not be published: ${retryFailure})`,
    );
    const diagnostics: Record<string, unknown> = {
      [EVGEN_HEADERS.firstFailureAt]: firstFailureAt,
      [EVGEN_HEADERS.lastFailureAt]: now,
      [EVGEN_HEADERS.lastErrorType]: errorType,
      [EVGEN_HEADERS.lastError]: truncate(described.message),
      [EVGEN_HEADERS.originalExchange]: originalExchange,
      [EVGEN_HEADERS.originalRoutingKey]: originalRoutingKey,
      [EVGEN_HEADERS.attempt]: attempt,
      [EVGEN_HEADERS.errorType]: errorType,
      [EVGEN_HEADERS.errorMessage]: errorMessage,
      [EVGEN_HEADERS.attempts]: attempt,
      [EVGEN_HEADERS.consumer]: handler.name,
      [EVGEN_HEADERS.deadLetteredAt]: now,
      ...(traceId !== undefined ? { [EVGEN_HEADERS.traceId]: traceId } : {}),
    };
    // First the full dead letter; if even that is refused, a minimal one whose headers are only
    // evgen's diagnostics plus every received header serialized, which always encodes.
    const letters = [
      properties({ ...received, ...diagnostics }),
      minimalProperties(messageId, {
        ...diagnostics,
        [UNENCODABLE_HEADERS]: serializeHeaders(message.properties.headers ?? {}),
      }),
    ];
    let lastError: unknown;
    for (const letter of letters) {
      try {
        await current.publisher.publish(
          routes.retryExchange,
          routes.deadRoutingKey,
          message.content,
          letter,
        );
        ack(current, message);
        counts.deadLettered++;
        emit({ type: 'dead-lettered', messageId, attempts: attempt, error });
        return;
      } catch (publishError) {
        counts.settleFailures++;
        emit({ type: 'error', error: publishError });
        lastError = publishError;
      }
    }
    // The dead queue cannot take it (broker or topology trouble, not this message): keep the
    // delivery unacked and rebuild the channel so the broker redelivers it after a backoff.
    if (!current.ended) {
      current.ended = true;
      if (session === current) session = undefined;
      void current.channel.close().catch(() => undefined);
      restart(lastError);
    }
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    metrics: () => ({ ...counts }),
    async start() {
      if (stopping) throw new Error('a stopped consumer runner cannot be started again');
      if (session !== undefined) return;
      await open();
    },
    async stop() {
      stopping = true;
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
