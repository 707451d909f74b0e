/**
 * A Pulsar message as the delivery core sees it: the payload, and evgen's properties beside it
 * (the Kafka transport's header names: messageId, eventType, aggregate, traceId).
 */
import type { Delivery } from '../../delivery/delivery.js';
import { KAFKA_HEADERS } from '../../kafka/kafka-record.js';
import type { PulsarInboundMessage } from '../pulsar-client.js';

/** How errors name the messageId beside a Pulsar message's payload. */
export const PULSAR_MESSAGE_ID_HINT = 'messageId property';

export function pulsarDelivery(message: PulsarInboundMessage, attempt: number): Delivery {
  const p = message.properties;
  const text = (name: string) => (p[name] === undefined || p[name] === '' ? undefined : p[name]);
  const type = text(KAFKA_HEADERS.aggregateType);
  const id = text(KAFKA_HEADERS.aggregateId);
  const version = Number(text(KAFKA_HEADERS.aggregateVersion) ?? NaN);
  return {
    body: message.payload,
    messageId: text(KAFKA_HEADERS.messageId),
    eventType: text(KAFKA_HEADERS.eventType),
    aggregate:
      type === undefined || id === undefined
        ? undefined
        : Number.isSafeInteger(version)
          ? { type, id, version }
          : { type, id },
    traceId: text(KAFKA_HEADERS.traceId),
    attempt,
    facts: {
      transport: 'pulsar',
      topic: message.topic,
      redelivered: attempt > 1 || message.redeliveryCount > 0,
      headers: p,
    },
  };
}
