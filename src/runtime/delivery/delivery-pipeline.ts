/**
 * The receive pipeline every transport runs a delivery through:
 *
 *   decode within limits → identify (messageId agreement) → route (subscribed or skipped)
 *     → handler (the inbox guard + business code) → outcome
 *
 * and the one place that decides what a failure means (failure.ts): malformed → dead letter;
 * dependency unavailable → pause, no attempt used; retryable with attempts left → retry;
 * otherwise → dead letter with its facts. Transports (RabbitMQ, Kafka, in-process) only build the
 * `Delivery` and carry the outcome out.
 */
import { messageBodyLimits, type MessageBodyLimits } from '../decode-message-body.js';
import { traceProcess } from '../telemetry.js';
import type { AggregateHint, Delivery, DeliveryContext } from './delivery.js';
import type { DeliveryOutcome } from './delivery-outcome.js';
import {
  classifyFailure,
  failureFacts,
  type DeadLetterFacts,
  type DeadLetterReason,
  type FailureClassifier,
  type FailureFacts,
} from './failure.js';
import { findGapError } from './gap-error.js';
import { decideGapWait } from './gap-wait.js';
import type { MessageHandler } from './message-handler.js';
import { bodyMessageId, bodyString, parseDelivery } from './parse-delivery.js';

interface DeliveryPipelineOptions {
  readonly handler: MessageHandler;
  /** The consumer's name in spans (its inbox key). Default: `handler.name`. */
  readonly consumer?: string;
  /** Handling attempts in all, the first delivery included. */
  readonly maxAttempts: number;
  readonly messageLimits?: MessageBodyLimits;
  /** How the transport names its messageId beside the body, in errors: `messageId property`. */
  readonly messageIdHint?: string;
  /**
   * What an unavailable dependency means: `'pause'` (default) the `unavailable` outcome, no
   * attempt used; `'retry'` a retryable failure like any other.
   */
  readonly onUnavailable?: 'pause' | 'retry';
  /** The user's classification hook, asked before evgen's own (failure.ts). */
  readonly classify?: FailureClassifier | undefined;
  /**
   * How long a gap (`ctx.inOrder` found an earlier version missing) may wait without progress of
   * its aggregate, without using an attempt (gap-wait.ts). Undefined: a gap is an ordinary
   * retryable failure (transports that cannot park one).
   */
  readonly gapWaitMs?: number | undefined;
  /** Clock for failure times (tests). */
  readonly now?: () => number;
}

/** A delivery's body, decoded and identified, or why it could not be. */
export type IdentifiedDelivery =
  | { readonly body: Record<string, unknown>; readonly error?: undefined }
  | { readonly body?: undefined; readonly error: unknown };

export interface DeliveryPipeline {
  /**
   * Decodes and identifies a delivery (no handler runs). Transports that order work by aggregate
   * call it on arrival and pass the result to `process`.
   */
  identify(delivery: Delivery): IdentifiedDelivery;
  /** Runs the whole pipeline; never rejects (a failure is an outcome). */
  process(delivery: Delivery, identified?: IdentifiedDelivery): Promise<DeliveryOutcome>;
}

export function createDeliveryPipeline(options: DeliveryPipelineOptions): DeliveryPipeline {
  const { handler, maxAttempts } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError('maxAttempts must be a positive integer');
  const consumer = options.consumer ?? handler.name;
  const limits = messageBodyLimits(options.messageLimits);
  const hintName = options.messageIdHint ?? 'messageId property';
  const pauseWhenUnavailable = (options.onUnavailable ?? 'pause') === 'pause';
  const now = options.now ?? Date.now;
  const subscribed = handler.subscribes !== undefined ? new Set(handler.subscribes) : undefined;

  function identify(delivery: Delivery): IdentifiedDelivery {
    try {
      return { body: parseDelivery(delivery.body, delivery, limits, hintName) };
    } catch (error) {
      return { error };
    }
  }

  function letterFor(
    delivery: Delivery,
    failure: FailureFacts,
    reason: DeadLetterReason,
    body: Record<string, unknown> | undefined,
  ): DeadLetterFacts {
    return {
      consumer: handler.name,
      messageId:
        bodyString(body, 'messageId') ?? delivery.messageId ?? bodyMessageId(delivery.body, limits),
      failure,
      attempts: delivery.attempt,
      traceId: delivery.traceId ?? bodyString(body, 'traceId'),
      reason,
      origin: delivery.facts,
    };
  }

  function deadLetter(
    delivery: Delivery,
    error: unknown,
    failure: FailureFacts,
    reason: DeadLetterReason,
    body: Record<string, unknown> | undefined,
  ): DeliveryOutcome {
    const letter = letterFor(delivery, failure, reason, body);
    return { kind: 'dead-letter', messageId: letter.messageId, error, body, letter };
  }

  async function process(
    delivery: Delivery,
    identified?: IdentifiedDelivery,
  ): Promise<DeliveryOutcome> {
    const context: DeliveryContext = { attempt: delivery.attempt, delivery: delivery.facts };
    // Decided from the transport's eventType before the body is parsed: skipping stays cheap.
    if (
      subscribed !== undefined &&
      delivery.eventType !== undefined &&
      !subscribed.has(delivery.eventType)
    )
      return skip(delivery, undefined, delivery.eventType, context);
    const { body, error: malformed } = identified ?? identify(delivery);
    if (body === undefined)
      return deadLetter(
        delivery,
        malformed,
        failureFacts(malformed, new Date(now())),
        'malformed',
        body,
      );
    const messageId = body.messageId as string;
    const eventType = String(body.eventType);
    // A producer that sent no eventType beside the body: the body's own decides.
    if (subscribed !== undefined && !subscribed.has(eventType))
      return skip(delivery, body, eventType, context);
    try {
      const result = await traceProcess(
        delivery.facts.headers,
        { messageId, eventType, system: delivery.facts.transport, consumer },
        () => handler.handle(body, context),
      );
      return {
        kind: result === 'duplicate' ? 'duplicate' : 'handled',
        messageId,
        eventType,
        result,
        body,
      };
    } catch (error) {
      return failed(delivery, error, body, messageId);
    }
  }

  /** Settles a delivery of a type the consumer does not subscribe to; no handler runs. */
  async function skip(
    delivery: Delivery,
    body: Record<string, unknown> | undefined,
    eventType: string,
    context: DeliveryContext,
  ): Promise<DeliveryOutcome> {
    const messageId = bodyString(body, 'messageId') ?? delivery.messageId;
    if (handler.skip !== undefined) {
      try {
        await handler.skip(
          { messageId, eventType, aggregate: delivery.aggregate ?? aggregateOf(body) },
          context,
        );
      } catch (error) {
        // Recording the skipped version failed (database down, an earlier version missing):
        // the delivery comes again like any failed one, never as poison.
        const identified = body ?? identify(delivery).body;
        if (identified !== undefined)
          return failed(delivery, error, identified, identified.messageId as string);
        return deadLetter(delivery, error, failureFacts(error, new Date(now())), 'malformed', body);
      }
    }
    return { kind: 'skipped', messageId, eventType, reason: 'unsubscribed' };
  }

  function failed(
    delivery: Delivery,
    error: unknown,
    body: Record<string, unknown>,
    messageId: string,
  ): DeliveryOutcome {
    const failure = failureFacts(error, new Date(now()));
    let kind = classifyFailure(error, options.classify);
    if (kind === 'unavailable') {
      if (pauseWhenUnavailable) return { kind: 'unavailable', messageId, error };
      kind = 'retryable';
    }
    if (kind === 'non-retryable')
      return deadLetter(delivery, error, failure, 'non-retryable', body);
    // A gap that may still wait is parked whatever its attempt: waiting uses none.
    const gapWait =
      kind === 'gap' && options.gapWaitMs !== undefined
        ? decideGapWait(delivery.gapClock, findGapError(error)?.expected, now(), options.gapWaitMs)
        : undefined;
    const park = gapWait?.park === true ? gapWait : undefined;
    if (park === undefined && delivery.attempt >= maxAttempts)
      return deadLetter(delivery, error, failure, 'attempts-exhausted', body);
    return {
      kind: 'retry',
      messageId,
      attempt: delivery.attempt,
      error,
      failure,
      park,
      body,
      letter: letterFor(delivery, failure, 'attempts-exhausted', body),
    };
  }

  return { identify, process };
}

/** The aggregate an envelope body names, when the transport's headers did not. */
function aggregateOf(body: Record<string, unknown> | undefined): AggregateHint | undefined {
  const type = bodyString(body, 'aggregateType');
  const id = bodyString(body, 'aggregateId');
  if (type === undefined || id === undefined) return undefined;
  const version = body?.aggregateVersion;
  return typeof version === 'number' ? { type, id, version } : { type, id };
}
