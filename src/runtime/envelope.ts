/**
 * The envelope every evgen message travels in. The same `messageId`
 * identifies the event from the outbox row to the broker, every retry copy, the dead letter
 * and the inbox row: nothing downstream ever mints a new one.
 */
import { ValidationError, type Violation } from './errors.js';
import { uuidV7 } from './uuid-v7.js';

export interface Envelope<
  TType extends string = string,
  TVersion extends number = number,
  TPayload = unknown,
> {
  /** UUIDv7: unique per event, time-ordered. */
  readonly messageId: string;
  readonly eventType: TType;
  readonly schemaVersion: TVersion;
  /** The aggregate kind, e.g. `Order`. */
  readonly aggregateType: string;
  /** Taken from the payload's aggregate-id property; decides key, routing and per-entity order. */
  readonly aggregateId: string;
  /** Per-aggregate sequence number, when the producer tracks one. */
  readonly aggregateVersion?: number;
  /** ISO-8601 timestamp of when the fact happened. */
  readonly occurredAt: string;
  readonly traceId?: string;
  readonly correlationId?: string;
  readonly causationId?: string;
  readonly payload: TPayload;
}

/** Optional envelope fields a caller may set; everything else is derived. */
export interface EnvelopeMeta {
  readonly messageId?: string;
  readonly occurredAt?: string | Date;
  readonly aggregateVersion?: number;
  readonly traceId?: string;
  readonly correlationId?: string;
  readonly causationId?: string;
}

/** Result of validating a value against one schema. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; violations: Violation[] };

/** Checks one payload against one version's schema; violations point into the payload. */
export type PayloadValidator<T> = (payload: unknown) => ValidationResult<T>;

/**
 * Everything the runtime needs to know about one version of one event. Generated code
 * creates one per event version; the runtime never reads the catalog files itself.
 */
export interface EventVersionDescriptor<
  TType extends string = string,
  TVersion extends number = number,
  TPayload = unknown,
> {
  readonly eventType: TType;
  readonly schemaVersion: TVersion;
  readonly aggregateType: string;
  /** Name of the payload property that holds the aggregate id. */
  readonly aggregateIdProperty: string;
  /**
   * The WRITER validator (strict): every object is closed, so a producer can never emit a
   * property the schema does not declare. `createEnvelope` and outbox writers use it.
   */
  readonly validatePayload: PayloadValidator<TPayload>;
  /**
   * The READER validator (tolerant): unknown properties are accepted everywhere, while
   * required properties, types, enums and formats are still enforced. Consumers and
   * `parseEnvelope` use it, so a newer producer's optional additions never break old readers.
   */
  readonly readPayload: PayloadValidator<TPayload>;
  readonly kafka?: { readonly topic: string };
  readonly rabbitmq?: { readonly exchange: string; readonly routingKey: string };
}

/** Days of each month in a common year (index 0 = January). */
const DAYS_IN_MONTH: readonly number[] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// Both checks run on every envelope built or parsed; they read character codes instead of
// matching a regular expression (several times faster, and no match arrays to collect).

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** A UUID in its canonical text form (any version: ids minted elsewhere are accepted too). */
export function isUuid(value: string): boolean {
  if (value.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = value.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d /* - */) return false;
    } else if (!isHexDigit(c)) return false;
  }
  return true;
}

/** The value of `length` decimal digits at `at`, or -1 if any is not a digit. */
function digits(value: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** RFC 3339 date-time with a real calendar date (no 2024-02-30) and an offset. */
export function isDateTime(value: string): boolean {
  // YYYY-MM-DDTHH:MM:SS, then an optional fraction, then Z or ±HH:MM.
  if (value.length < 20) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  const t = value.charCodeAt(10);
  if (
    year < 0 ||
    value.charCodeAt(4) !== 0x2d ||
    value.charCodeAt(7) !== 0x2d ||
    !(t === 0x54 /* T */ || t === 0x74 /* t */ || t === 0x20) ||
    value.charCodeAt(13) !== 0x3a ||
    value.charCodeAt(16) !== 0x3a ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 60
  )
    return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false;
  let at = 19;
  if (value.charCodeAt(at) === 0x2e /* . */) {
    const first = ++at;
    while (at < value.length && digits(value, at, 1) >= 0) at++;
    if (at === first) return false;
  }
  const zone = value.charCodeAt(at);
  if (zone === 0x5a /* Z */ || zone === 0x7a /* z */) return at + 1 === value.length;
  if (zone !== 0x2b /* + */ && zone !== 0x2d /* - */) return false;
  const offsetHour = digits(value, at + 1, 2);
  const offsetMinute = digits(value, at + 4, 2);
  return (
    at + 6 === value.length &&
    value.charCodeAt(at + 3) === 0x3a &&
    offsetHour >= 0 &&
    offsetHour <= 23 &&
    offsetMinute >= 0 &&
    offsetMinute <= 59
  );
}

/** A per-aggregate sequence number: a non-negative safe integer. */
export function isAggregateVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Generates a new message id: a UUIDv7, later than every id this process generated before. */
export function newMessageId(): string {
  return uuidV7();
}

/**
 * Builds an envelope for a payload: validates it, takes the aggregate id from the payload
 * (so the two can never disagree) and fills in ids and timestamps the caller did not set.
 * Throws a ValidationError listing every violation: of the payload (pointers into it), or, when
 * a caller-set field (`messageId`, `occurredAt`, `aggregateVersion`) is invalid too, of the whole
 * envelope (pointers like `/messageId` and `/payload/lines/0`).
 */
export function createEnvelope<TType extends string, TVersion extends number, TPayload>(
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  meta: EnvelopeMeta = {},
): Envelope<TType, TVersion, TPayload> {
  // The caller's envelope fields get the same checks parseEnvelope makes, so what a constructor
  // builds every consumer accepts.
  const metaViolations: Violation[] = [];
  if (meta.messageId !== undefined && !isUuid(meta.messageId)) {
    metaViolations.push({ pointer: '/messageId', keyword: 'format', message: 'must be a UUID' });
  }
  const occurredAt =
    meta.occurredAt instanceof Date
      ? dateTimeOf(meta.occurredAt)
      : (meta.occurredAt ?? new Date().toISOString());
  // A timestamp made here from the clock is valid by construction; only the caller's is checked.
  if (meta.occurredAt !== undefined && (occurredAt === undefined || !isDateTime(occurredAt))) {
    metaViolations.push({
      pointer: '/occurredAt',
      keyword: 'format',
      message: 'must be an RFC 3339 date-time (or a valid Date)',
    });
  }
  if (meta.aggregateVersion !== undefined && !isAggregateVersion(meta.aggregateVersion)) {
    metaViolations.push({
      pointer: '/aggregateVersion',
      keyword: 'type',
      message: 'must be a non-negative integer',
    });
  }
  const checked = descriptor.validatePayload(payload);
  const aggregateId = (payload as Record<string, unknown>)[descriptor.aggregateIdProperty];
  if (
    checked.ok &&
    metaViolations.length === 0 &&
    typeof aggregateId === 'string' &&
    aggregateId !== ''
  )
    return envelopeOf(descriptor, payload, meta, aggregateId, occurredAt!);
  const payloadViolations = checked.ok ? [] : checked.violations;
  if (checked.ok && typeof aggregateId !== 'string') {
    payloadViolations.push({
      pointer: `/${descriptor.aggregateIdProperty}`,
      keyword: 'type',
      message: 'aggregate id must be a string',
    });
  } else if (checked.ok && aggregateId === '') {
    payloadViolations.push({
      pointer: `/${descriptor.aggregateIdProperty}`,
      keyword: 'minLength',
      message: 'aggregate id must not be empty',
    });
  }
  const subject = `${descriptor.eventType} v${descriptor.schemaVersion}`;
  if (metaViolations.length > 0) {
    // Pointers into the whole envelope, so a payload property named like an envelope field stays distinct.
    const inPayload = payloadViolations.map((v) => ({ ...v, pointer: `/payload${v.pointer}` }));
    throw new ValidationError(`${subject} envelope`, [...metaViolations, ...inPayload]);
  }
  throw new ValidationError(`${subject} payload`, payloadViolations);
}

/** The envelope of a checked payload; without optional fields, one object of a fixed shape. */
function envelopeOf<TType extends string, TVersion extends number, TPayload>(
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  meta: EnvelopeMeta,
  aggregateId: string,
  occurredAt: string,
): Envelope<TType, TVersion, TPayload> {
  if (
    meta.aggregateVersion === undefined &&
    meta.traceId === undefined &&
    meta.correlationId === undefined &&
    meta.causationId === undefined
  ) {
    return {
      messageId: meta.messageId ?? newMessageId(),
      eventType: descriptor.eventType,
      schemaVersion: descriptor.schemaVersion,
      aggregateType: descriptor.aggregateType,
      aggregateId,
      occurredAt,
      payload,
    };
  }
  return {
    messageId: meta.messageId ?? newMessageId(),
    eventType: descriptor.eventType,
    schemaVersion: descriptor.schemaVersion,
    aggregateType: descriptor.aggregateType,
    aggregateId,
    ...(meta.aggregateVersion !== undefined ? { aggregateVersion: meta.aggregateVersion } : {}),
    occurredAt,
    ...(meta.traceId !== undefined ? { traceId: meta.traceId } : {}),
    ...(meta.correlationId !== undefined ? { correlationId: meta.correlationId } : {}),
    ...(meta.causationId !== undefined ? { causationId: meta.causationId } : {}),
    payload,
  };
}

/** ISO text of a Date, or undefined for an Invalid Date (whose toISOString throws). */
function dateTimeOf(date: Date): string | undefined {
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
