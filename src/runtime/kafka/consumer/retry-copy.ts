/**
 * What a record says about itself as a retry copy: its attempt and when it is due. Believed only
 * on the consumer's own retry topics (`trusted`); a record of an event topic is attempt 1 and
 * due at once.
 */
import type { KafkaInboundRecord } from '../kafka-client.js';
import { KAFKA_CONSUMER_HEADERS as H, headerInteger, headerTime } from './consumer-headers.js';
import type { KafkaRetryTier } from './failure-routing.js';

/** The attempt the record was sent as: its `evgen-attempt` header when trusted, else 1. */
export function copyAttempt(record: KafkaInboundRecord, trusted: boolean): number {
  return trusted ? Math.max(1, headerInteger(record.headers, H.attempt) ?? 1) : 1;
}

/**
 * When a copy read from `tier`'s topic is due, epoch ms: its own due-time header, but never later
 * than the tier's delay after it was written, so a forged or broken header cannot park a
 * partition.
 */
export function copyDueAt(record: KafkaInboundRecord, tier: KafkaRetryTier): number {
  const latest = Number(record.timestamp) + tier.delayMs;
  return Math.min(headerTime(record.headers, H.retryDueAt) ?? latest, latest);
}
