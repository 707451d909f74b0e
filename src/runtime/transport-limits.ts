/**
 * Checks a message against what each broker can carry (the limits are written down once, in
 * broker-limits.ts). The outbox writers refuse at write time a value beyond them (a
 * `ValidationError` naming the field and the limit, so the business transaction fails), and the
 * relay's publishers refuse a stored row beyond them at publish time as that message's fault
 * (`UnpublishableMessageError`: DEAD with the reason), never as a broker outage. Sizes are UTF-8
 * bytes.
 */
import type { Envelope } from './envelope.js';
import { EvgenError, type Violation } from './errors.js';
import { escapePointerSegment } from './json-pointer.js';
import { EVGEN_HEADERS, envelopeAmqpHeaders } from './rabbitmq/amqp-message.js';
import { encodedValueBytes } from './rabbitmq/copy-limits.js';
import { AMQP_LIMITS, KAFKA_LIMITS } from './broker-limits.js';

export { AMQP_LIMITS, KAFKA_LIMITS };
import { KAFKA_HEADERS, kafkaEnvelopeHeaders } from './kafka/kafka-record.js';

/**
 * Room the writer leaves in the header table and the Kafka record for headers set at publish
 * time (the trace context of the relay's publish span: `traceparent`, up to 512 bytes of
 * `tracestate`), so what it accepts the relay can still publish.
 */
const PUBLISH_TIME_HEADER_RESERVE = 1_024;

/** The transports an event is published on (the descriptor's `rabbitmq` and `kafka` routes). */
interface MessageTransports {
  readonly rabbitmq?: unknown;
  readonly kafka?: unknown;
}

/** The size of a message body: a cheap upper bound, and the exact count when that is too much. */
export interface BodySize {
  readonly atMost: number;
  exact(): number;
}

/**
 * A message a broker cannot carry (a property, header or the whole message over its limit):
 * the same bytes fail the same way, so never retryable. The outbox relay moves its row to DEAD.
 */
export class UnpublishableMessageError extends EvgenError {
  readonly retryable = false;
  readonly code = 'UnpublishableMessageError';
  constructor(
    readonly messageId: string,
    readonly violations: readonly Violation[],
    options?: { cause?: unknown },
  ) {
    super(
      `message ${messageId} cannot be published: ` +
        violations.map((v) => `${v.pointer || '/'} ${v.message}`).join('; '),
      options,
    );
    this.name = 'UnpublishableMessageError';
  }
}

const utf8Bytes = (text: string): number =>
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short texts need no count.
  text.length * 3 <= AMQP_LIMITS.shortStringBytes ? text.length : Buffer.byteLength(text, 'utf8');

const bytes = (text: string | Uint8Array): number =>
  typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : text.length;
/** At most the UTF-8 bytes of `text` (3 per UTF-16 unit), without counting them. */
const bytesAtMost = (text: string | Uint8Array): number =>
  typeof text === 'string' ? text.length * 3 : text.length;

/** The envelope field (as a pointer) an evgen header of either transport repeats. */
const HEADER_FIELD: ReadonlyMap<string, string> = new Map([
  ...Object.entries(EVGEN_HEADERS).map(([field, header]) => [header, field] as const),
  ...Object.entries(KAFKA_HEADERS).map(([field, header]) => [header, field] as const),
  [KAFKA_HEADERS.ceId, 'messageId'],
  [KAFKA_HEADERS.ceType, 'eventType'],
  [KAFKA_HEADERS.ceSubject, 'aggregateId'],
  [KAFKA_HEADERS.ceTime, 'occurredAt'],
]);

/** Where a header's value comes from: the envelope field evgen copies into it, or `/headers/<name>`. */
function headerPointer(name: string, own: readonly string[]): string {
  const field = own.includes(name) ? HEADER_FIELD.get(name) : undefined;
  return field !== undefined ? `/${field}` : `/headers/${escapePointerSegment(name)}`;
}

function shortString(pointer: string, what: string, value: string, violations: Violation[]): void {
  const size = utf8Bytes(value);
  if (size > AMQP_LIMITS.shortStringBytes)
    violations.push({
      pointer,
      keyword: 'maxLength',
      message: `is ${size} bytes; RabbitMQ carries ${what} as an AMQP short string of at most ${AMQP_LIMITS.shortStringBytes} bytes`,
    });
}

/** The largest entry of `sizes`, by bytes. */
function largest(sizes: ReadonlyMap<string, number>): [string, number] {
  let top: [string, number] = ['', 0];
  for (const entry of sizes) if (entry[1] > top[1]) top = entry;
  return top;
}

/**
 * What RabbitMQ cannot carry of this message: its short-string properties and header names, the
 * encoded size of its header table (within `headerTableBytes − reserve`) and its body.
 */
export function amqpViolations(
  properties: {
    readonly messageId: string;
    readonly type: string;
    readonly correlationId?: string;
  },
  headers: Readonly<Record<string, string | number>>,
  body: BodySize,
  reserve = 0,
): Violation[] {
  const violations: Violation[] = [];
  shortString('/messageId', 'the messageId property', properties.messageId, violations);
  shortString('/eventType', 'the type property', properties.type, violations);
  if (properties.correlationId !== undefined)
    shortString(
      '/correlationId',
      'the correlationId property',
      properties.correlationId,
      violations,
    );
  const own: readonly string[] = Object.values(EVGEN_HEADERS);
  // amqplib's encoding: the table's length (4), then per entry the name's length (1), the name
  // and the typed value (copy-limits.ts measures it as amqplib writes it).
  let table = 4;
  const sizes = new Map<string, number>();
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    const nameBytes = utf8Bytes(name);
    if (nameBytes > AMQP_LIMITS.shortStringBytes)
      violations.push({
        pointer: headerPointer(name, own),
        keyword: 'maxLength',
        message: `has a name of ${nameBytes} bytes; RabbitMQ carries a header name as an AMQP short string of at most ${AMQP_LIMITS.shortStringBytes} bytes`,
      });
    const entry = 1 + nameBytes + encodedValueBytes(value);
    sizes.set(name, entry);
    table += entry;
  }
  const tableLimit = AMQP_LIMITS.headerTableBytes - reserve;
  if (table > tableLimit) {
    const [name, size] = largest(sizes);
    violations.push({
      pointer: headerPointer(name, own),
      keyword: 'maxLength',
      message: `makes the AMQP header table ${table} bytes (this header ${size}); RabbitMQ carries at most ${tableLimit} bytes of headers per message`,
    });
  }
  const bodyBytes = body.atMost <= AMQP_LIMITS.bodyBytes ? 0 : body.exact();
  if (bodyBytes > AMQP_LIMITS.bodyBytes)
    violations.push({
      pointer: '/payload',
      keyword: 'maxLength',
      message: `makes the message body ${bodyBytes} bytes; RabbitMQ's default max_message_size is ${AMQP_LIMITS.bodyBytes} bytes`,
    });
  return violations;
}

/**
 * What Kafka cannot carry of this record: key, value and headers together beyond what a broker
 * takes in one record batch by default (within `recordBatchBytes − reserve`).
 */
export function kafkaViolations(
  key: string,
  headers: Readonly<Record<string, string | Uint8Array>>,
  value: BodySize,
  reserve = 0,
): Violation[] {
  const limit = KAFKA_LIMITS.recordBatchBytes - reserve;
  const fixed = KAFKA_LIMITS.batchOverheadBytes + KAFKA_LIMITS.recordOverheadBytes;
  const names = Object.keys(headers);
  let atMost = fixed + key.length * 3 + value.atMost;
  for (const name of names)
    atMost += KAFKA_LIMITS.headerOverheadBytes + name.length * 3 + bytesAtMost(headers[name]!);
  if (atMost <= limit) return [];
  // Bytes per field: an envelope field counts its header and its copy inside the value, the
  // payload what is left of the value, so the field that makes the record too large is named.
  const own: readonly string[] = Object.values(KAFKA_HEADERS);
  const valueBytes = value.exact();
  const sizes = new Map<string, number>();
  const add = (pointer: string, size: number) =>
    sizes.set(pointer, (sizes.get(pointer) ?? 0) + size);
  let record = fixed + bytes(key) + valueBytes;
  const mirrored = new Map<string, number>();
  for (const name of names) {
    const header = headers[name]!;
    const size = KAFKA_LIMITS.headerOverheadBytes + bytes(name) + bytes(header);
    record += size;
    const pointer = headerPointer(name, own);
    add(pointer, size);
    if (own.includes(name) && HEADER_FIELD.has(name)) mirrored.set(pointer, bytes(header));
  }
  if (record <= limit) return [];
  let inValue = 0;
  for (const [pointer, size] of mirrored) {
    add(pointer, size);
    inValue += size;
  }
  add('/payload', Math.max(0, valueBytes - inValue));
  const [pointer, size] = largest(sizes);
  return [
    {
      pointer,
      keyword: 'maxLength',
      message:
        `makes the Kafka record ${record} bytes (${size} of them from here); ` +
        `a Kafka broker takes at most ${limit} bytes per record by default (message.max.bytes)`,
    },
  ];
}

/**
 * Every violation of a transport the event is published on, for the outbox writers: the AMQP
 * message and the Kafka record the relay (or Debezium) will publish for `envelope` with the
 * stored `headers`, with room left for headers set at publish time. `body` is the envelope JSON.
 * A field both transports refuse is reported once per transport.
 */
export function transportLimitViolations(
  envelope: Envelope,
  headers: Readonly<Record<string, string>>,
  transports: MessageTransports,
  body: BodySize,
): Violation[] {
  const violations: Violation[] = [];
  if (transports.rabbitmq !== undefined) {
    violations.push(
      ...amqpViolations(
        {
          messageId: envelope.messageId,
          type: envelope.eventType,
          ...(envelope.correlationId !== undefined
            ? { correlationId: envelope.correlationId }
            : {}),
        },
        envelopeAmqpHeaders(envelope, headers),
        body,
        PUBLISH_TIME_HEADER_RESERVE,
      ),
    );
  }
  if (transports.kafka !== undefined) {
    violations.push(
      ...kafkaViolations(
        envelope.aggregateId,
        kafkaEnvelopeHeaders(envelope, headers),
        body,
        PUBLISH_TIME_HEADER_RESERVE,
      ),
    );
  }
  return violations;
}

/**
 * The size of an envelope's JSON from its payload's JSON text without writing the envelope: the
 * payload's length plus every other field's, each UTF-16 unit at most 3 bytes (a JSON escape of a
 * control character is 6 characters for 1), plus the names and punctuation.
 */
export function envelopeBodySize(envelope: Envelope, payloadJson: string): BodySize {
  let fields = 0;
  for (const value of [
    envelope.messageId,
    envelope.eventType,
    envelope.aggregateType,
    envelope.aggregateId,
    envelope.occurredAt,
    envelope.traceId,
    envelope.correlationId,
    envelope.causationId,
  ])
    if (value !== undefined) fields += value.length;
  return {
    atMost: payloadJson.length * 3 + fields * 6 + 256,
    exact: () => bytes(JSON.stringify(envelope)),
  };
}
