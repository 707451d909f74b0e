/**
 * The envelope every evgen message travels in (design notes §1). The same `messageId`
 * identifies the event from the outbox row to the broker, every retry copy, the dead letter
 * and the inbox row: nothing downstream ever mints a new one.
 */
import { v7 as uuidv7 } from 'uuid';
import { ValidationError, type Violation } from './errors.js';

export interface Envelope<TType extends string = string, TVersion extends number = number, TPayload = unknown> {
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
export interface EventVersionDescriptor<TType extends string = string, TVersion extends number = number, TPayload = unknown> {
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

/** Generates a new message id (UUIDv7). */
export function newMessageId(): string {
  return uuidv7();
}

/**
 * Builds an envelope for a payload: validates it, takes the aggregate id from the payload
 * (so the two can never disagree) and fills in ids and timestamps the caller did not set.
 * Throws a ValidationError listing every violation.
 */
export function createEnvelope<TType extends string, TVersion extends number, TPayload>(
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  meta: EnvelopeMeta = {},
): Envelope<TType, TVersion, TPayload> {
  const checked = descriptor.validatePayload(payload);
  if (!checked.ok) {
    throw new ValidationError(`${descriptor.eventType} v${descriptor.schemaVersion} payload`, checked.violations);
  }
  const aggregateId = (payload as Record<string, unknown>)[descriptor.aggregateIdProperty];
  if (typeof aggregateId !== 'string') {
    throw new ValidationError(`${descriptor.eventType} v${descriptor.schemaVersion} payload`, [
      { pointer: `/${descriptor.aggregateIdProperty}`, keyword: 'type', message: 'aggregate id must be a string' },
    ]);
  }
  const occurredAt = meta.occurredAt instanceof Date ? meta.occurredAt.toISOString() : (meta.occurredAt ?? new Date().toISOString());
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
