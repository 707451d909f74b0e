/**
 * The properties of the copies the Pulsar runner produces, under the Kafka transport's header
 * names (`evgen-attempt`, `evgen-error-type`, …: consumer-headers.ts), so one tool reads both:
 * - a retry copy: the received properties, the attempt it will be, its due time and the failure
 *   history;
 * - a dead letter: the same plus evgen's diagnostics, and Pulsar's own dead-letter properties
 *   (`REAL_TOPIC`, `ORIGIN_MESSAGE_ID`, what the Java client's dead-letter policy writes), so
 *   Pulsar tooling reads evgen's dead letters as it reads the broker's.
 * Runner-owned properties are believed only on the consumer's own retry topics; a copy of an
 * event-topic message drops any a producer set. Pure: the runner sends them.
 */
import {
  deadLetterHistory,
  retryCopyHistory,
  type CopyStart,
} from '../../delivery/copy-history.js';
import { truncateText, type DeadLetterFacts, type FailureFacts } from '../../delivery/failure.js';
import {
  isRunnerHeader,
  KAFKA_CONSUMER_HEADERS as H,
} from '../../kafka/consumer/consumer-headers.js';
import type { PulsarInboundMessage, PulsarProperties } from '../pulsar-client.js';

/** evgen's names for what Kafka's coordinates are on Pulsar, and Pulsar's dead-letter names. */
export const PULSAR_CONSUMER_PROPERTIES = Object.freeze({
  ...H,
  /** The broker's id of the message as first consumed (opaque, base64). */
  originalMessageId: 'evgen-original-message-id',
  /** Pulsar's dead-letter policy's names (Java client `RetryMessageUtil`). */
  realTopic: 'REAL_TOPIC',
  originMessageId: 'ORIGIN_MESSAGE_ID',
});
const P = PULSAR_CONSUMER_PROPERTIES;

function isRunnerProperty(name: string): boolean {
  return isRunnerHeader(name) || name === P.originalMessageId;
}

/** Where the message was first consumed: from a trusted retry copy, else the message itself. */
function original(message: PulsarInboundMessage, trusted: boolean) {
  const topic = trusted ? message.properties[P.originalTopic] : undefined;
  const id = trusted ? message.properties[P.originalMessageId] : undefined;
  return topic !== undefined && id !== undefined
    ? { topic, messageId: id }
    : { topic: message.topic, messageId: message.messageId };
}

/** How every copy starts (`copy-history.ts`): `trusted` when it came from a retry topic. */
function copyStart(
  message: PulsarInboundMessage,
  trusted: boolean,
  failure: FailureFacts,
): CopyStart<string> {
  const from = original(message, trusted);
  return {
    received: message.properties,
    trusted,
    runnerOwned: isRunnerProperty,
    origin: { [P.originalTopic]: from.topic, [P.originalMessageId]: from.messageId },
    failure,
  };
}

/** The retry copy's properties for attempt `nextAttempt`, due at `dueAt` (epoch ms). */
export function retryCopyProperties(
  message: PulsarInboundMessage,
  trusted: boolean,
  failure: FailureFacts,
  nextAttempt: number,
  dueAt: number,
): PulsarProperties {
  return retryCopyHistory(P, copyStart(message, trusted, failure), nextAttempt, dueAt);
}

/**
 * The dead letter's properties. `minimal`: only evgen's diagnostics and the envelope's ids (the
 * fallback when the full copy is too large for the broker's WebSocket frame), the cut named in
 * `evgen-cut`.
 */
export function deadLetterProperties(
  message: PulsarInboundMessage,
  trusted: boolean,
  letter: DeadLetterFacts,
  minimal = false,
): PulsarProperties {
  const { failure } = letter;
  const properties = deadLetterHistory(P, copyStart(message, trusted, failure), letter);
  const from = original(message, trusted);
  properties[P.realTopic] = from.topic;
  properties[P.originMessageId] = from.messageId;
  return minimal ? minimalCopy(properties, failure) : properties;
}

/**
 * A copy's properties cut to evgen's own and the envelope's ids (the fallback when the full copy
 * is too large for the broker's WebSocket frame), each cut named in `evgen-cut`.
 */
export function minimalCopy(properties: PulsarProperties, failure: FailureFacts): PulsarProperties {
  const kept: Record<string, string> = {};
  const cut: Record<string, string> = {};
  for (const [name, value] of Object.entries(properties)) {
    if (isRunnerProperty(name) || name === P.realTopic || name === P.originMessageId) {
      kept[name] = name === P.lastError ? truncateText(value, 200) : value;
    } else if (['messageId', 'eventType', 'aggregateId', 'aggregateType'].includes(name)) {
      kept[name] = truncateText(value, 200);
    } else if (Object.keys(cut).length < 16) {
      cut[`property ${name.slice(0, 60)}`] = 'dropped: the copy must fit the WebSocket frame';
    }
  }
  if (kept[P.errorMessage] !== undefined) kept[P.errorMessage] = truncateText(failure.message, 500);
  kept[P.cut] = JSON.stringify(cut);
  return kept;
}
