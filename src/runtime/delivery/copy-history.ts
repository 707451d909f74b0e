/**
 * The evgen part of the copies a runner produces on a transport with retry topics (Kafka and
 * Pulsar), one rule for both so one tool reads either's history:
 * - every copy starts from the received headers: all of them when the message came from the
 *   consumer's own retry topic (`trusted`: its history is the runner's), otherwise without the
 *   runner-owned ones (a sender's, not to be believed); then where the message was first consumed
 *   (the transport's coordinates) and the failure history (first and last failure, last error);
 * - a retry copy adds the attempt it will be and when it is due;
 * - a dead letter adds evgen's diagnostics (attempts, error, consumer, when, trace).
 * The transport adds its own on top (Spring's `kafka_dlt-*`, Pulsar's `REAL_TOPIC`). Pure.
 */
import { truncateText, type FailureFacts } from './failure.js';

/** The names the rule writes: the Kafka runner's `evgen-*` headers, which Pulsar's properties share. */
export interface CopyHistoryNames {
  readonly attempt: string;
  readonly retryDueAt: string;
  readonly firstFailureAt: string;
  readonly lastFailureAt: string;
  readonly lastErrorType: string;
  readonly lastError: string;
  readonly errorType: string;
  readonly errorMessage: string;
  readonly attempts: string;
  readonly consumer: string;
  readonly deadLetteredAt: string;
  readonly traceId: string;
}

/** A header or property value as the transports carry them. */
type CopyValue = string | Buffer;

/** How a copy starts; see the module comment. */
export interface CopyStart<V extends CopyValue> {
  readonly received: Readonly<Record<string, V | undefined>>;
  readonly trusted: boolean;
  /** Whether a header is the runner's own (dropped from an untrusted message's copy). */
  readonly runnerOwned: (name: string) => boolean;
  /** Where the message was first consumed, as headers, in the order they are written. */
  readonly origin: Readonly<Record<string, string>>;
  readonly failure: FailureFacts;
}

/** The headers every copy starts from. */
export function copyHistory<V extends CopyValue>(
  names: CopyHistoryNames,
  start: CopyStart<V>,
): Record<string, V | string> {
  const { received, trusted, failure } = start;
  const headers: Record<string, V | string> = {};
  for (const [name, value] of Object.entries(received))
    if (value !== undefined && (trusted || !start.runnerOwned(name))) headers[name] = value;
  Object.assign(headers, start.origin);
  const now = failure.at.toISOString();
  headers[names.firstFailureAt] =
    (trusted ? text(received[names.firstFailureAt]) : undefined) ?? now;
  headers[names.lastFailureAt] = now;
  headers[names.lastErrorType] = failure.errorType;
  headers[names.lastError] = truncateText(failure.message);
  return headers;
}

/** A retry copy's headers: the history, the attempt it will be and when it is due (epoch ms). */
export function retryCopyHistory<V extends CopyValue>(
  names: CopyHistoryNames,
  start: CopyStart<V>,
  nextAttempt: number,
  dueAt: number,
): Record<string, V | string> {
  return {
    ...copyHistory(names, start),
    [names.attempt]: String(nextAttempt),
    [names.retryDueAt]: new Date(dueAt).toISOString(),
  };
}

/** What a dead letter says beyond its failure. */
export interface DeadLetterDiagnosis {
  readonly consumer: string;
  /** Handling attempts made, the last one included. */
  readonly attempts: number;
  readonly traceId?: string | undefined;
}

/** A dead letter's headers: the history and evgen's diagnostics (no due time). */
export function deadLetterHistory<V extends CopyValue>(
  names: CopyHistoryNames,
  start: CopyStart<V>,
  diagnosis: DeadLetterDiagnosis,
): Record<string, V | string> {
  const { failure } = start;
  const headers = copyHistory(names, start);
  delete headers[names.retryDueAt];
  headers[names.attempt] = String(diagnosis.attempts);
  headers[names.attempts] = String(diagnosis.attempts);
  headers[names.errorType] = failure.errorType;
  headers[names.errorMessage] = truncateText(failure.message);
  headers[names.consumer] = diagnosis.consumer;
  headers[names.deadLetteredAt] = failure.at.toISOString();
  if (diagnosis.traceId !== undefined) headers[names.traceId] = diagnosis.traceId;
  return headers;
}

/** A value as UTF-8 text; undefined when absent or empty. */
function text(value: CopyValue | undefined): string | undefined {
  const decoded = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  return decoded === undefined || decoded === '' ? undefined : decoded;
}
