/**
 * How an envelope travels as a Kafka record, following the CloudEvents Kafka protocol binding in
 * BINARY content mode: the record value is the event data, and the data of an evgen CloudEvent
 * is the whole envelope JSON (`content-type: application/json`); CloudEvents attributes travel
 * as `ce_*` headers. So a CloudEvents reader sees id = messageId, type = eventType,
 * subject = aggregateId, time = occurredAt, and an evgen reader parses the value as the envelope.
 *
 *   key      aggregateId, always (partition = murmur2(key), per-aggregate order)
 *   value    the envelope as UTF-8 JSON
 *   headers  messageId, eventType, schemaVersion, aggregateType, aggregateId, occurredAt,
 *            aggregateVersion / traceId / correlationId / causationId when present,
 *            content-type, ce_specversion, ce_id, ce_type, ce_source, ce_subject, ce_time
 */
import type { Envelope } from '../envelope.js';
import type { KafkaOutboundRecord } from './kafka-client.js';
import { copyHeaders } from '../header-copy.js';

/** Header names evgen sets on every record (some only when the envelope has the field). */
export const KAFKA_HEADERS = Object.freeze({
  messageId: 'messageId',
  eventType: 'eventType',
  schemaVersion: 'schemaVersion',
  aggregateType: 'aggregateType',
  aggregateId: 'aggregateId',
  aggregateVersion: 'aggregateVersion',
  occurredAt: 'occurredAt',
  traceId: 'traceId',
  correlationId: 'correlationId',
  causationId: 'causationId',
  contentType: 'content-type',
  // CloudEvents Kafka binding, binary mode.
  ceSpecVersion: 'ce_specversion',
  ceId: 'ce_id',
  ceType: 'ce_type',
  ceSource: 'ce_source',
  ceSubject: 'ce_subject',
  ceTime: 'ce_time',
});

const ENVELOPE_CONTENT_TYPE = 'application/json';

/** CloudEvents `source` of evgen events: the aggregate kind, as a URI reference. */
function cloudEventSource(envelope: Pick<Envelope, 'aggregateType'>): string {
  return `/evgen/${encodeURIComponent(envelope.aggregateType)}`;
}

/**
 * The evgen headers of an envelope, after `extra` (trace context stored with an outbox row, a
 * caller's headers): the same as `{ ...extra, ...evgenHeaders }`, evgen's names winning, built
 * name by name (header-copy.ts says why).
 */
export function kafkaEnvelopeHeaders(
  envelope: Envelope,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const headers = copyHeaders<string>({}, extra);
  const h = KAFKA_HEADERS;
  headers[h.messageId] = envelope.messageId;
  headers[h.eventType] = envelope.eventType;
  headers[h.schemaVersion] = String(envelope.schemaVersion);
  headers[h.aggregateType] = envelope.aggregateType;
  headers[h.aggregateId] = envelope.aggregateId;
  headers[h.occurredAt] = envelope.occurredAt;
  headers[h.contentType] = ENVELOPE_CONTENT_TYPE;
  headers[h.ceSpecVersion] = '1.0';
  headers[h.ceId] = envelope.messageId;
  headers[h.ceType] = envelope.eventType;
  headers[h.ceSource] = cloudEventSource(envelope);
  headers[h.ceSubject] = envelope.aggregateId;
  headers[h.ceTime] = envelope.occurredAt;
  if (envelope.aggregateVersion !== undefined)
    headers[h.aggregateVersion] = String(envelope.aggregateVersion);
  if (envelope.traceId !== undefined) headers[h.traceId] = envelope.traceId;
  if (envelope.correlationId !== undefined) headers[h.correlationId] = envelope.correlationId;
  if (envelope.causationId !== undefined) headers[h.causationId] = envelope.causationId;
  return headers;
}

/**
 * The record for `envelope` on `topic`. Extra headers (trace context stored with an outbox row)
 * come first, so evgen's own names always win.
 */
export function envelopeToKafkaRecord(
  envelope: Envelope,
  topic: string,
  headers: Readonly<Record<string, string>> = {},
): KafkaOutboundRecord {
  return {
    topic,
    key: envelope.aggregateId,
    value: Buffer.from(JSON.stringify(envelope), 'utf8'),
    headers: kafkaEnvelopeHeaders(envelope, headers),
  };
}
