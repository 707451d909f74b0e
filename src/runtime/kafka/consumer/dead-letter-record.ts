/**
 * The headers of the copies the runner produces: retry copies (same key, value and messageId;
 * attempt, due time and failure history in `evgen-*` headers) and dead letters (the same plus
 * evgen's diagnostics and Spring Kafka's `kafka_dlt-*` headers). Pure: the runner sends them.
 */
import type { KafkaInboundRecord } from '../kafka-client.js';
import {
  KAFKA_CONSUMER_HEADERS as H,
  SPRING_DLT_HEADERS as S,
  headerText,
  int32Header,
  int64Header,
  withoutRunnerHeaders,
  type KafkaHeaderValue,
} from './consumer-headers.js';
import { truncateText, type FailureFacts } from '../../delivery/failure.js';

const MAX_STACK_TEXT = 8_000;

export type { FailureFacts } from '../../delivery/failure.js';

/** Where the record was first consumed: read from a retry copy, or the record itself. */
export interface OriginalCoordinates {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly timestamp: string;
}

export function originalCoordinates(
  record: KafkaInboundRecord,
  trusted: boolean,
): OriginalCoordinates {
  const headers = record.headers;
  const topic = trusted ? headerText(headers, H.originalTopic) : undefined;
  const partition = trusted ? headerText(headers, H.originalPartition) : undefined;
  const offset = trusted ? headerText(headers, H.originalOffset) : undefined;
  const timestamp = trusted ? headerText(headers, H.originalTimestamp) : undefined;
  if (
    topic !== undefined &&
    partition !== undefined &&
    /^\d+$/.test(partition) &&
    offset !== undefined &&
    /^\d+$/.test(offset)
  ) {
    return {
      topic,
      partition: Number(partition),
      offset,
      timestamp: timestamp !== undefined && /^\d+$/.test(timestamp) ? timestamp : record.timestamp,
    };
  }
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
  };
}

/**
 * Headers every copy starts from. `trusted` says the record came from one of the consumer's own
 * retry topics: then its history headers are the runner's and kept; a main-topic record's
 * runner-owned headers are a sender's and dropped.
 */
function baseHeaders(
  record: KafkaInboundRecord,
  trusted: boolean,
  failure: FailureFacts,
): Record<string, KafkaHeaderValue> {
  const headers: Record<string, KafkaHeaderValue> = trusted
    ? { ...record.headers }
    : withoutRunnerHeaders(record.headers);
  const original = originalCoordinates(record, trusted);
  const now = failure.at.toISOString();
  headers[H.originalTopic] = original.topic;
  headers[H.originalPartition] = String(original.partition);
  headers[H.originalOffset] = original.offset;
  headers[H.originalTimestamp] = original.timestamp;
  headers[H.firstFailureAt] =
    (trusted ? headerText(record.headers, H.firstFailureAt) : undefined) ?? now;
  headers[H.lastFailureAt] = now;
  headers[H.lastErrorType] = failure.errorType;
  headers[H.lastError] = truncateText(failure.message);
  return headers;
}

/** Headers of the retry copy for attempt `nextAttempt`, due at `dueAt`. */
export function retryCopyHeaders(
  record: KafkaInboundRecord,
  trusted: boolean,
  failure: FailureFacts,
  nextAttempt: number,
  dueAt: number,
): Record<string, KafkaHeaderValue> {
  return {
    ...baseHeaders(record, trusted, failure),
    [H.attempt]: String(nextAttempt),
    [H.retryDueAt]: new Date(dueAt).toISOString(),
  };
}

export interface DeadLetterContext {
  readonly consumer: string;
  readonly groupId: string;
  /** Handling attempts made, this one included. */
  readonly attempts: number;
  readonly traceId?: string;
}

/** Headers of the dead letter: evgen's diagnostics and Spring's `kafka_dlt-*` ones. */
export function deadLetterHeaders(
  record: KafkaInboundRecord,
  trusted: boolean,
  failure: FailureFacts,
  context: DeadLetterContext,
): Record<string, KafkaHeaderValue> {
  const headers = baseHeaders(record, trusted, failure);
  delete headers[H.retryDueAt];
  const original = originalCoordinates(record, trusted);
  headers[H.attempt] = String(context.attempts);
  headers[H.attempts] = String(context.attempts);
  headers[H.errorType] = failure.errorType;
  headers[H.errorMessage] = truncateText(failure.message);
  headers[H.consumer] = context.consumer;
  headers[H.deadLetteredAt] = failure.at.toISOString();
  if (context.traceId !== undefined) headers[H.traceId] = context.traceId;
  headers[S.originalTopic] = original.topic;
  headers[S.originalPartition] = int32Header(original.partition);
  headers[S.originalOffset] = int64Header(original.offset);
  headers[S.originalTimestamp] = int64Header(original.timestamp);
  headers[S.originalTimestampType] = 'CreateTime';
  headers[S.originalConsumerGroup] = context.groupId;
  headers[S.exceptionFqcn] = failure.wrapperType ?? failure.errorType;
  if (failure.wrapperType !== undefined) headers[S.exceptionCauseFqcn] = failure.errorType;
  headers[S.exceptionMessage] = truncateText(failure.message);
  if (failure.stack !== undefined)
    headers[S.exceptionStacktrace] = truncateText(failure.stack, MAX_STACK_TEXT);
  return headers;
}
