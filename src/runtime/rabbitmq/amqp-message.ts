/**
 * How an envelope travels as an AMQP message: the JSON envelope is the body; AMQP properties and
 * `x-evgen-*` headers repeat what brokers, tools and the dead-letter inspector need without
 * parsing the body. The messageId property is the envelope's messageId, always.
 */
import type { MessageProperties, Options } from 'amqplib';
import type { Envelope } from '../envelope.js';
import { CUT_HEADER, fitCopy } from './copy-limits.js';
import { copyHeaders } from '../header-copy.js';

/** Every header evgen sets. Other headers (e.g. `traceparent` from the outbox row) pass through untouched. */
export const EVGEN_HEADERS = Object.freeze({
  schemaVersion: 'x-evgen-schema-version',
  aggregateType: 'x-evgen-aggregate-type',
  aggregateId: 'x-evgen-aggregate-id',
  aggregateVersion: 'x-evgen-aggregate-version',
  occurredAt: 'x-evgen-occurred-at',
  traceId: 'x-evgen-trace-id',
  correlationId: 'x-evgen-correlation-id',
  causationId: 'x-evgen-causation-id',
  /** The handling attempt this delivery is (1 when absent). Counted here, never from `x-death`. */
  attempt: 'x-evgen-attempt',
  firstFailureAt: 'x-evgen-first-failure-at',
  lastFailureAt: 'x-evgen-last-failure-at',
  lastErrorType: 'x-evgen-last-error-type',
  lastError: 'x-evgen-last-error',
  /** Where the message was first published; retry copies come back through the default exchange. */
  originalExchange: 'x-evgen-original-exchange',
  originalRoutingKey: 'x-evgen-original-routing-key',
  // Dead-letter diagnostics.
  errorType: 'x-evgen-error-type',
  errorMessage: 'x-evgen-error-message',
  attempts: 'x-evgen-attempts',
  consumer: 'x-evgen-consumer',
  deadLetteredAt: 'x-evgen-dead-lettered-at',
  // Set by replayDeadLetters on the copy it sends back to the work queue.
  replays: 'x-evgen-replays',
  replayedAt: 'x-evgen-replayed-at',
  /**
   * Gap waits (not attempts; delivery/gap-wait.ts): when the wait clock of a message found ahead
   * of a missing version last (re)started, i.e. its first gap or the last one that saw its
   * aggregate progress; ISO time.
   */
  gapSince: 'x-evgen-gap-since',
  /** The version the aggregate expected at that gap (progress restarts the wait clock). */
  gapExpected: 'x-evgen-gap-expected',
  /** When the first gap was found: the whole wait ends 10 × `gapWaitMs` after it. ISO time. */
  gapFirst: 'x-evgen-gap-first',
  /** What a copy left off because it could not be carried (JSON: field -> why). */
  cut: CUT_HEADER,
});

/** Publish options the confirmed publisher requires: a messageId to match returns with. */
export type PublishProperties = Options.Publish & { readonly messageId: string };

interface AmqpMessage {
  readonly content: Buffer;
  readonly properties: PublishProperties;
}

/**
 * The header table of an envelope's message: the caller's headers, then evgen's (whose names
 * always win).
 */
export function envelopeAmqpHeaders(
  envelope: Envelope,
  headers: Readonly<Record<string, string>> = {},
): Record<string, string | number> {
  // The caller's first, then evgen's set on the same object, name by name (header-copy.ts says why).
  const table = copyHeaders<string | number>({}, headers);
  const h = EVGEN_HEADERS;
  table[h.schemaVersion] = envelope.schemaVersion;
  table[h.aggregateType] = envelope.aggregateType;
  table[h.aggregateId] = envelope.aggregateId;
  table[h.occurredAt] = envelope.occurredAt;
  if (envelope.aggregateVersion !== undefined)
    table[h.aggregateVersion] = envelope.aggregateVersion;
  if (envelope.traceId !== undefined) table[h.traceId] = envelope.traceId;
  if (envelope.correlationId !== undefined) table[h.correlationId] = envelope.correlationId;
  if (envelope.causationId !== undefined) table[h.causationId] = envelope.causationId;
  return table;
}

/** Body and properties for an envelope: persistent, mandatory, JSON, with evgen's headers. */
export function envelopeToAmqpMessage(
  envelope: Envelope,
  headers: Readonly<Record<string, string>> = {},
): AmqpMessage {
  const occurred = Date.parse(envelope.occurredAt);
  return {
    content: Buffer.from(JSON.stringify(envelope), 'utf8'),
    properties: {
      messageId: envelope.messageId,
      type: envelope.eventType,
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      // AMQP timestamps are seconds since the epoch.
      timestamp: Math.floor((Number.isNaN(occurred) ? Date.now() : occurred) / 1000),
      persistent: true,
      mandatory: true,
      ...(envelope.correlationId !== undefined ? { correlationId: envelope.correlationId } : {}),
      headers: envelopeAmqpHeaders(envelope, headers),
    },
  };
}

/** A header as text (amqplib hands some string headers over as Buffers), or undefined. */
export function headerString(
  headers: Readonly<Record<string, unknown>>,
  name: string,
): string | undefined {
  const value = headers[name];
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/**
 * Properties for a copy of a received message (retry copy, dead letter, replay): the original's,
 * minus per-delivery ones, with `headers`; always persistent, same messageId. Fitted to what
 * amqplib and the broker can carry (copy-limits.ts): what does not fit is dropped and named in
 * `x-evgen-cut`, and `CC`/`BCC` are never copied.
 */
export function copyPublishProperties(
  properties: MessageProperties,
  headers: Record<string, unknown>,
): PublishProperties {
  const copy: Options.Publish = { persistent: true, headers };
  if (properties.contentType !== undefined) copy.contentType = properties.contentType as string;
  if (properties.contentEncoding !== undefined)
    copy.contentEncoding = properties.contentEncoding as string;
  if (properties.correlationId !== undefined)
    copy.correlationId = properties.correlationId as string;
  if (properties.replyTo !== undefined) copy.replyTo = properties.replyTo as string;
  if (properties.type !== undefined) copy.type = properties.type as string;
  if (properties.timestamp !== undefined) copy.timestamp = properties.timestamp as number;
  if (properties.appId !== undefined) copy.appId = properties.appId as string;
  if (properties.priority !== undefined) copy.priority = properties.priority as number;
  // A message without a usable id (malformed) still needs one to match a possible return.
  const invented = () => `evgen-dead-${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const messageId =
    typeof properties.messageId === 'string' && properties.messageId !== ''
      ? properties.messageId
      : invented();
  return fitCopy({ ...copy, messageId }, (name) => name.startsWith('x-evgen-'), invented);
}
