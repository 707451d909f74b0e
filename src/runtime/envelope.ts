/**
 * The envelope every evgen message travels in. The same `messageId`
 * identifies the event from the outbox row to the broker, every retry copy, the dead letter
 * and the inbox row: nothing downstream ever mints a new one.
 */
import { v7 as uuidv7 } from 'uuid';
import { ValidationError, type Violation } from './errors.js';

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** A UUID in its canonical text form (any version: ids minted elsewhere are accepted too). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** RFC 3339 date-time with a real calendar date (no 2024-02-30) and an offset. */
export function isDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (match === null) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = match[9] === undefined || (Number(match[9]) <= 23 && Number(match[10]) <= 59);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 60 &&
    offsetOk
  );
}

/** A per-aggregate sequence number: a non-negative safe integer. */
export function isAggregateVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Generates a new message id (UUIDv7). */
export function newMessageId(): string {
  return uuidv7();
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
  const subject = `${descriptor.eventType} v${descriptor.schemaVersion}`;
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
  if (occurredAt === undefined || !isDateTime(occurredAt)) {
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
  const payloadViolations = checked.ok ? [] : checked.violations;
  const aggregateId = (payload as Record<string, unknown>)[descriptor.aggregateIdProperty];
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
  if (metaViolations.length > 0) {
    // Pointers into the whole envelope, so a payload property named like an envelope field stays distinct.
    const inPayload = payloadViolations.map((v) => ({ ...v, pointer: `/payload${v.pointer}` }));
    throw new ValidationError(`${subject} envelope`, [...metaViolations, ...inPayload]);
  }
  if (payloadViolations.length > 0)
    throw new ValidationError(`${subject} payload`, payloadViolations);
  return {
    messageId: meta.messageId ?? newMessageId(),
    eventType: descriptor.eventType,
    schemaVersion: descriptor.schemaVersion,
    aggregateType: descriptor.aggregateType,
    aggregateId: aggregateId as string,
    ...(meta.aggregateVersion !== undefined ? { aggregateVersion: meta.aggregateVersion } : {}),
    occurredAt: occurredAt!,
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
