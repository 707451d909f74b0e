/**
 * A Kafka record as the delivery core sees it: the `Delivery` (body unframed, messageId and
 * event type from evgen's headers, the aggregate they name, where the record was read) and, for
 * a record in Confluent's wire format, whether its schema id agrees with the envelope.
 */
import type { MessageBodyLimits } from '../../decode-message-body.js';
import type { IdentifiedDelivery } from '../../delivery/delivery-pipeline.js';
import type { AggregateHint, Delivery } from '../../delivery/delivery.js';
import { MalformedMessageError } from '../../delivery/malformed-message-error.js';
import { parseDelivery } from '../../delivery/parse-delivery.js';
import type { SchemaIds } from '../../registry/schema-ids.js';
import { readConfluentFrame } from '../confluent-framing.js';
import type { KafkaInboundRecord } from '../kafka-client.js';
import { KAFKA_HEADERS } from '../kafka-record.js';
import { headerInteger, headerText } from './consumer-headers.js';
import { KAFKA_MESSAGE_ID_HEADER } from './kafka-consumer-types.js';

/** How errors name the messageId beside a Kafka record's value. */
export const KAFKA_MESSAGE_ID_HINT = 'messageId header';

/** The aggregate evgen's headers name (aggregateType, aggregateId, aggregateVersion), if they do. */
function aggregateHint(record: KafkaInboundRecord): AggregateHint | undefined {
  const type = headerText(record.headers, KAFKA_HEADERS.aggregateType);
  const id = headerText(record.headers, KAFKA_HEADERS.aggregateId);
  if (type === undefined || id === undefined) return undefined;
  const version = headerInteger(record.headers, KAFKA_HEADERS.aggregateVersion);
  return version !== undefined ? { type, id, version } : { type, id };
}

/** The record as a delivery of `attempt`, with the schema id when its value is framed. */
export function kafkaDelivery(
  record: KafkaInboundRecord,
  attempt: number,
): { readonly delivery: Delivery; readonly schemaId: number | undefined } {
  const frame = readConfluentFrame(record.value);
  const delivery: Delivery = {
    body: frame?.data ?? record.value,
    messageId: headerText(record.headers, KAFKA_MESSAGE_ID_HEADER),
    eventType: headerText(record.headers, KAFKA_HEADERS.eventType),
    aggregate: aggregateHint(record),
    traceId: headerText(record.headers, KAFKA_HEADERS.traceId),
    attempt,
    facts: {
      transport: 'kafka',
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      redelivered: attempt > 1,
      headers: record.headers,
    },
  };
  return { delivery, schemaId: frame?.schemaId };
}

/**
 * A framed record's envelope, parsed once, or why its schema id contradicts the envelope (see
 * the runner's `schemaIds`); undefined leaves it to the pipeline (no lookup configured, an id the
 * registry does not know, a registry that cannot be reached).
 */
export async function identifyFramed(
  schemaIds: SchemaIds,
  schemaId: number,
  delivery: Delivery,
  limits: MessageBodyLimits,
): Promise<IdentifiedDelivery | undefined> {
  let registered;
  try {
    registered = await schemaIds.lookup(schemaId);
  } catch {
    return undefined; // registry unreachable: the envelope decides
  }
  if (registered === undefined) return undefined;
  let body: Record<string, unknown>;
  try {
    body = parseDelivery(delivery.body, delivery, limits, KAFKA_MESSAGE_ID_HINT);
  } catch (error) {
    return { error };
  }
  if (body.eventType === registered.eventType && body.schemaVersion === registered.version)
    return { body };
  return {
    error: new MalformedMessageError(
      `schema id ${schemaId} is ${registered.eventType} v${registered.version}, but the envelope says ${String(body.eventType)} v${String(body.schemaVersion)}`,
    ),
  };
}
