/**
 * The one failure classification of every transport, and the one shape a failure is recorded in
 * (retry copies, dead letters, in-process records):
 *   - unavailable: a dependency is down (database connection lost, UnavailableError); the message
 *     is not at fault, so no attempt is used: the transport pauses consumption instead;
 *   - gap: `ctx.inOrder` found an earlier version of the aggregate missing (retryable; a transport
 *     may park the message without using an attempt);
 *   - retryable / non-retryable: the error's own `retryable` flag, else `classifyError`;
 * a user's `classify` hook is asked before all of them.
 */
import {
  classifyError,
  describeError,
  isRejectedMessageError,
  isUnavailableError,
} from '../errors.js';
import type { DeliveryFacts } from './delivery.js';
import { findGapError } from './gap-error.js';

export type FailureClass = 'unavailable' | 'gap' | 'retryable' | 'non-retryable';

/** Retryable per the error's own `retryable` flag, else per `classifyError`. */
function isRetryableFailure(error: unknown): boolean {
  const flag =
    typeof error === 'object' && error !== null
      ? (error as { retryable?: unknown }).retryable
      : undefined;
  return typeof flag === 'boolean' ? flag : classifyError(error) === 'retryable';
}

/**
 * The user's say in the classification (`classify` of every runner and of the relay), asked
 * first: a class decides, `undefined` leaves the decision to evgen. E.g. a per-exception retry
 * policy: `(e) => (e instanceof QuotaError ? 'non-retryable' : undefined)`.
 */
export type FailureClassifier = (error: unknown) => FailureClass | undefined;

const CLASSES: ReadonlySet<unknown> = new Set(['unavailable', 'gap', 'retryable', 'non-retryable']);

/**
 * The one classification of a failure, for consumers and the outbox relay alike: the user's
 * `classify` hook first, then unavailable, gap, the error's own `retryable` flag, `classifyError`.
 */
export function classifyFailure(error: unknown, classify?: FailureClassifier): FailureClass {
  const chosen = classify?.(error);
  if (CLASSES.has(chosen)) return chosen!;
  // A message the broker refuses for what it is (too large, …) fails the same way every time,
  // however much its error looks like an outage.
  if (isRejectedMessageError(error)) return 'non-retryable';
  if (isUnavailableError(error)) return 'unavailable';
  if (findGapError(error) !== undefined) return 'gap';
  return isRetryableFailure(error) ? 'retryable' : 'non-retryable';
}

/** What failed, as every transport records it. */
export interface FailureFacts {
  /** Error type (`ValidationError`, `RetryableError`, the original type behind a wrapper). */
  readonly errorType: string;
  /** The wrapper's own type when the error wrapped another (e.g. `InboxHandlerError`). */
  readonly wrapperType?: string;
  readonly message: string;
  readonly stack?: string;
  /** When this failure happened. */
  readonly at: Date;
}

/** The failure as recorded in retry copies and dead letters; wrappers name the original type. */
export function failureFacts(error: unknown, at: Date): FailureFacts {
  const described = describeError(error);
  const causeType =
    typeof error === 'object' && error !== null
      ? (error as { causeType?: unknown }).causeType
      : undefined;
  const wrapped = typeof causeType === 'string' && causeType !== described.type;
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : undefined;
  return {
    errorType: wrapped ? causeType : described.type,
    ...(wrapped ? { wrapperType: described.type } : {}),
    message: described.message,
    ...(stack !== undefined ? { stack } : {}),
    at,
  };
}

const MAX_ERROR_TEXT = 2_000;

/** Error texts in headers are bounded: a huge message must not make a copy unsendable. */
export function truncateText(text: string, max = MAX_ERROR_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * One dead letter, whatever carries it: the transport encodes these facts in its own headers
 * (evgen's `x-evgen-*` on RabbitMQ, `evgen-*` and Spring's `kafka_dlt-*` on Kafka) or keeps them
 * as they are (the in-process broker).
 */
export interface DeadLetterFacts {
  readonly consumer: string;
  readonly messageId: string | undefined;
  readonly failure: FailureFacts;
  /** Handling attempts made, the last one included. */
  readonly attempts: number;
  readonly traceId: string | undefined;
  /** Why it is a dead letter. */
  readonly reason: DeadLetterReason;
  /** Where the failing delivery came from. */
  readonly origin: DeliveryFacts;
}

export type DeadLetterReason = 'malformed' | 'non-retryable' | 'attempts-exhausted';
