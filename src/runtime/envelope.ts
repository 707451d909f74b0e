/**
 * The envelope every evgen message travels in. The same `messageId`
 * identifies the event from the outbox row to the broker, every retry copy, the dead letter
 * and the inbox row: nothing downstream ever mints a new one.
 */
import { ValidationError, type Violation } from './errors.js';
import { checkField, ENVELOPE_FIELDS, OCCURRED_AT_FIELD } from './envelope-fields.js';
import type { PayloadValidator } from './payload-validator.js';
import { unfaithfulNumbers } from './unfaithful-numbers.js';
import { uuidV7 } from './uuid-v7.js';

export { isAggregateVersion, isDateTime, isUuid } from './envelope-values.js';

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
  /**
   * The event's compatibility mode (`event.json`). A consumer reads a version newer than it knows
   * with this (its newest) version's reader only when the mode promises that old readers read new
   * data: FORWARD, FULL or their transitive forms. Absent: newer versions are dead-lettered.
   */
  readonly compatibility?: string;
}

/** Generates a new message id: a UUIDv7, later than every id this process generated before. */
export function newMessageId(): string {
  return uuidV7();
}

/** Envelope fields a caller may set (EnvelopeMeta), in the table's order. */
const CALLER_FIELDS = ENVELOPE_FIELDS.filter((field) =>
  [
    'messageId',
    'occurredAt',
    'aggregateVersion',
    'traceId',
    'correlationId',
    'causationId',
  ].includes(field.name),
);

/**
 * Builds an envelope for a payload: validates it, takes the aggregate id from the payload
 * (so the two can never disagree) and fills in ids and timestamps the caller did not set.
 * A number consumers could not read back unchanged (beyond ±(2^53 − 1), NaN, ±Infinity) is a
 * violation too, whatever the schema allows: such an event would only be dead-lettered.
 * Throws a ValidationError listing every violation: of the payload (pointers into it), or, when
 * a caller-set field (`messageId`, `occurredAt`, `aggregateVersion`) is invalid too, of the whole
 * envelope (pointers like `/messageId` and `/payload/lines/0`).
 */
export function createEnvelope<TType extends string, TVersion extends number, TPayload>(
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  meta: EnvelopeMeta = {},
): Envelope<TType, TVersion, TPayload> {
  // The caller's envelope fields get the same checks parseEnvelope makes (one table), so what a
  // constructor builds every consumer accepts.
  const metaViolations: Violation[] = [];
  const occurredAt =
    meta.occurredAt instanceof Date
      ? dateTimeOf(meta.occurredAt)
      : (meta.occurredAt ?? new Date().toISOString());
  for (const field of CALLER_FIELDS) {
    if (field !== OCCURRED_AT_FIELD) {
      const value = meta[field.name as keyof EnvelopeMeta];
      if (value !== undefined) checkField(field, value, metaViolations);
    } else if (meta.occurredAt !== undefined) {
      // A timestamp made here from the clock is valid by construction; only the caller's is checked.
      if (occurredAt !== undefined) checkField(field, occurredAt, metaViolations);
      else
        metaViolations.push({
          pointer: '/occurredAt',
          keyword: 'format',
          message: 'must be a valid Date',
        });
    }
  }
  const validated = descriptor.validatePayload(payload);
  // A payload the schema accepts may still hold numbers no consumer can read back unchanged.
  const numbers = unfaithfulNumbers(payload);
  const checked: typeof validated =
    numbers.length === 0
      ? validated
      : { ok: false, violations: [...(validated.ok ? [] : validated.violations), ...numbers] };
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
