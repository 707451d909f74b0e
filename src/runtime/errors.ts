/**
 * Errors the runtime raises. Every error says whether retrying can help, because the
 * transports route on that alone: retryable → retry tier, otherwise → dead letter.
 */

/** One violated rule of a schema, located by a JSON pointer into the validated value. */
export interface Violation {
  /** JSON pointer into the checked value, e.g. `/payload/items/0/sku` ("" for the root). */
  readonly pointer: string;
  /** The JSON Schema keyword that failed (`required`, `type`, …). */
  readonly keyword: string;
  readonly message: string;
}

export abstract class EvgenError extends Error {
  /** Whether the same input can succeed on a later attempt. */
  abstract readonly retryable: boolean;
  /** Stable machine-readable name, e.g. `ValidationError`; kept in dead letters. */
  abstract readonly code: string;
}

/** A value does not match its schema. Never retryable: the same bytes fail the same way. */
export class ValidationError extends EvgenError {
  readonly retryable = false;
  readonly code = 'ValidationError';
  constructor(
    readonly subject: string,
    readonly violations: readonly Violation[],
  ) {
    super(
      `${subject} is invalid: ` +
        violations.map((v) => `${v.pointer || '/'} ${v.message}`).join('; '),
    );
    this.name = 'ValidationError';
  }
}

/** The message names an event type or version this service does not know. */
export class UnknownEventError extends EvgenError {
  readonly retryable = false;
  readonly code = 'UnknownEventError';
  constructor(
    readonly eventType: string,
    readonly schemaVersion: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'UnknownEventError';
  }
}

/** A failure the caller marks as transient (timeout, throttling, unavailable dependency). */
export class RetryableError extends EvgenError {
  readonly retryable = true;
  readonly code = 'RetryableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

/** A failure the caller marks as permanent (illegal state, deterministic bug, poison input). */
export class NonRetryableError extends EvgenError {
  readonly retryable = false;
  readonly code = 'NonRetryableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

/**
 * An evgen write was handed a connection or data-layer handle that is not inside an open
 * transaction: it would have committed on its own, apart from the business rows. Nothing was
 * written.
 */
export class OutsideTransactionError extends NonRetryableError {
  constructor(message: string) {
    super(message);
    this.name = 'OutsideTransactionError';
  }
}

// SQLSTATE classes/codes that describe a transient condition: the same statement can succeed later.
const RETRYABLE_SQLSTATE_PREFIXES = ['08', '53', '57P', '58'];
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', '55P03']);
const RETRYABLE_NODE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

// MySQL/MariaDB error numbers (mysql2 `errno`) of transient conditions: lock wait timeout,
// deadlock, too many connections, server shutdown, connection killed, query interrupted, and the
// client's "server has gone away" / "lost connection".
const RETRYABLE_MYSQL_ERRNOS = new Set([1205, 1213, 1040, 1053, 1927, 1317, 2006, 2013]);
// Of those, the ones that say the server (not this statement) is unavailable.
const UNAVAILABLE_MYSQL_ERRNOS = new Set([1040, 1053, 1927, 2006, 2013]);
// mysql2's codes for a connection it lost or could not use (no errno).
const UNAVAILABLE_MYSQL_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'POOL_CLOSED',
]);

/** A MySQL/MariaDB server error as mysql2 reports it: a numeric `errno` and a `sqlState`. */
function mysqlServerError(error: unknown): { errno: number; sqlState: string } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { errno, sqlState } = error as { errno?: unknown; sqlState?: unknown };
  return typeof errno === 'number' && typeof sqlState === 'string' && errno > 0
    ? { errno, sqlState }
    : undefined;
}

type ErrorClass = 'retryable' | 'non-retryable';

/**
 * A dependency (database, broker, a downstream service) is down or unreachable: nothing is wrong
 * with the message. Retryable, and it does not use up the message's attempts: the outbox relay
 * backs off and keeps the row, the consumer runner stops taking deliveries until it is back.
 * Throw it from a handler for your own dependencies (an HTTP 503, a timeout).
 */
export class UnavailableError extends EvgenError {
  readonly retryable = true;
  readonly code: string = 'UnavailableError';
  readonly unavailable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnavailableError';
  }
}

/** One rule a CDC source server breaks, so a connector would not read what is written. */
export interface CdcServerProblem {
  /** The setting, e.g. `wal_level`, `binlog_format`, `replication slot evgen_outbox`. */
  readonly setting: string;
  /** What it is now, e.g. `replica`, `MIXED`, `missing`. */
  readonly value: string;
  /** What the connector needs, e.g. `logical`, `ROW (this session)`. */
  readonly required: string;
  /** How to change it (and whether that takes a server restart). */
  readonly remedy: string;
  /** True when it is the connector's own set-up (slot, publication, a binlog reader) that is missing. */
  readonly connector: boolean;
}

/**
 * The CDC outbox refused a write (or its migration): the server would not hand the event to a
 * connector, and the CDC outbox keeps no row, so committing it would lose it without a trace.
 * Nothing was written; the transaction is to roll back. Unavailable, not a fault of the message:
 * a consumer writing CDC events stops taking deliveries until the server is set up, instead of
 * dead-lettering them. `problems` lists every rule found broken (the writer stops at the first).
 */
export class CdcServerNotReadyError extends UnavailableError {
  override readonly code = 'CdcServerNotReadyError';
  /** The first problem's setting, value, needed value and remedy. */
  readonly setting: string;
  readonly value: string;
  readonly required: string;
  readonly remedy: string;
  constructor(
    readonly problems: readonly CdcServerProblem[],
    options?: { cause?: unknown },
  ) {
    super(
      `the CDC outbox refuses to write: no connector would read it. ${problems
        .map((p) => `${p.setting} is ${p.value}, needs ${p.required}: ${p.remedy}`)
        .join('; ')}`,
      options,
    );
    this.name = 'CdcServerNotReadyError';
    const first = problems[0]!;
    this.setting = first.setting;
    this.value = first.value;
    this.required = first.required;
    this.remedy = first.remedy;
  }
}

// Connection-level SQLSTATE classes: connection exception, operator intervention (shutdown),
// insufficient resources (too many connections).
const UNAVAILABLE_SQLSTATE_PREFIXES = ['08', '57P', '53'];
// node-postgres and amqplib report a lost connection with these texts (no code).
const CONNECTION_LOST =
  /connection terminated|connection (?:ended|closed|refused|reset)|timeout exceeded when trying to connect|client has encountered a connection error|socket hang up|channel ended|channel closed/i;

/**
 * Whether `error` (or an error in its `cause` chain) says a dependency is unavailable rather than
 * that the message is bad: `unavailable: true` (UnavailableError, the transports' channel-closed
 * and timeout errors), a network errno, a connection-level SQLSTATE, or a driver's
 * connection-lost message. Such failures must not consume a message's retry budget.
 */
export function isUnavailableError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const candidate = current as { unavailable?: unknown; code?: unknown; message?: unknown };
    if (candidate.unavailable === true) return true;
    const mysql = mysqlServerError(current);
    if (mysql !== undefined && UNAVAILABLE_MYSQL_ERRNOS.has(mysql.errno)) return true;
    const code = candidate.code;
    if (typeof code === 'string' && UNAVAILABLE_MYSQL_CODES.has(code)) return true;
    if (typeof code === 'string') {
      if (RETRYABLE_NODE_CODES.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code))
        return UNAVAILABLE_SQLSTATE_PREFIXES.some((prefix) => code.startsWith(prefix));
    }
    if (typeof candidate.message === 'string' && CONNECTION_LOST.test(candidate.message))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

// Kafka's answers that refuse a record for what it is, not for the broker's state: kafkajs names
// them in `type`, @platformatic/kafka in `apiId` (inside its `errors`).
const REJECTED_RECORD_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
]);

/**
 * The error in `error`'s chain (itself, `cause`, `errors`, `originalError`) that says the broker
 * refused the message itself (its size, its content) rather than being unavailable, or undefined.
 */
export function rejectedMessageCause(error: unknown): Error | undefined {
  const pending: unknown[] = [error];
  for (let seen = 0; seen < 32 && pending.length > 0; seen++) {
    const current = pending.shift();
    if (typeof current !== 'object' || current === null) continue;
    const candidate = current as {
      type?: unknown;
      apiId?: unknown;
      cause?: unknown;
      errors?: unknown;
      originalError?: unknown;
    };
    if (REJECTED_RECORD_TYPES.has(String(candidate.type ?? candidate.apiId)))
      return current as Error;
    pending.push(candidate.cause, candidate.originalError);
    if (Array.isArray(candidate.errors)) pending.push(...(candidate.errors as unknown[]));
  }
  return undefined;
}

/**
 * Whether the broker refused the message itself: the same bytes are refused again, so the
 * outbox relay moves the row to DEAD at once instead of counting an outage.
 */
export function isRejectedMessageError(error: unknown): boolean {
  return rejectedMessageCause(error) !== undefined;
}

/**
 * Decides whether retrying can help. evgen errors say so themselves; database and network
 * errors are judged by their codes; anything else is treated as retryable, because the retry
 * budget is bounded and a deterministic bug still ends in the dead letter after it.
 */
export function classifyError(error: unknown): ErrorClass {
  if (error instanceof EvgenError) return error.retryable ? 'retryable' : 'non-retryable';
  // MySQL/MariaDB: deadlocks and lock-wait timeouts (1213/1205) and lost connections are
  // transient; any other server error (constraint, syntax, data) is deterministic.
  const mysql = mysqlServerError(error);
  if (mysql !== undefined) {
    if (RETRYABLE_MYSQL_ERRNOS.has(mysql.errno) || mysql.sqlState.startsWith('08'))
      return 'retryable';
    return mysql.sqlState === '40001' ? 'retryable' : 'non-retryable';
  }
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string') {
    if (RETRYABLE_SQLSTATES.has(code) || RETRYABLE_NODE_CODES.has(code)) return 'retryable';
    if (RETRYABLE_SQLSTATE_PREFIXES.some((prefix) => code.startsWith(prefix))) return 'retryable';
    // Any other five-character SQLSTATE (constraint violations, syntax, data errors) is deterministic.
    if (/^[0-9A-Z]{5}$/.test(code)) return 'non-retryable';
  }
  return 'retryable';
}

/** A short, serialisable description of an error for dead letters and `last_error` columns. */
export function describeError(error: unknown): { type: string; message: string } {
  if (error instanceof EvgenError) return { type: error.code, message: error.message };
  if (error instanceof Error) return { type: error.name || 'Error', message: error.message };
  return { type: typeof error, message: String(error) };
}
