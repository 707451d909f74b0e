/**
 * The headers of the copies the runner produces: retry copies (same key, value and messageId;
 * attempt, due time and failure history in `evgen-*` headers) and dead letters (the same plus
 * evgen's diagnostics and Spring Kafka's `kafka_dlt-*` headers). Pure: the runner sends them.
 *
 * A copy must fit the limit of the topic it goes to (`max.message.bytes`, which the runner reads
 * once per topic through the admin API; the broker's `message.max.bytes`, 1 MiB, by default)
 * although it carries more than the record it copies: `fitKafkaCopy` measures it and drops the largest
 * headers the runner did not write until it fits, naming each in `evgen-cut`, so a record near
 * the limit cannot make its own dead letter unsendable (and the record come back forever).
 */
import type { KafkaInboundRecord } from '../kafka-client.js';
import {
  KAFKA_CONSUMER_HEADERS as H,
  SPRING_DLT_HEADERS as S,
  headerText,
  int32Header,
  int64Header,
  isRunnerHeader,
  type KafkaHeaderValue,
} from './consumer-headers.js';
import {
  deadLetterHistory,
  retryCopyHistory,
  type CopyStart,
} from '../../delivery/copy-history.js';
import { truncateText, type FailureFacts } from '../../delivery/failure.js';

const MAX_STACK_TEXT = 8_000;

/** Where a copy names what was left off it: JSON `{ "header <name>": "<why>" }`. */
export const KAFKA_CUT_HEADER = H.cut;
/**
 * Largest copy the runner sends (key + value + headers): below Kafka's default
 * `message.max.bytes` (1 048 588 bytes per record batch), with room for the batch framing.
 */
export const MAX_KAFKA_COPY_BYTES = 1_000_000;
/** Per-header framing in a record (varint lengths), counted generously. */
const HEADER_OVERHEAD = 10;
/** A runner header is kept only up to this size (a larger one was forged). */
const MAX_KEPT_HEADER_BYTES = 8 * 1024;
const MAX_CUT_ENTRIES = 16;

function valueBytes(value: KafkaHeaderValue): number {
  return Buffer.isBuffer(value) ? value.length : Buffer.byteLength(value, 'utf8');
}

/** Bytes a record takes on the wire, framing counted generously. */
export function kafkaRecordBytes(
  key: string,
  value: Buffer | string,
  headers: Readonly<Record<string, KafkaHeaderValue>>,
): number {
  let bytes = 64 + Buffer.byteLength(key, 'utf8') + valueBytes(value);
  for (const [name, header] of Object.entries(headers))
    bytes += HEADER_OVERHEAD + Buffer.byteLength(name, 'utf8') + valueBytes(header);
  return bytes;
}

/**
 * Whether a send failed because the broker refused the record as too large (kafkajs:
 * MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE; @platformatic/kafka: the same Kafka error names).
 */
export function isRecordTooLarge(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const type = (current as { type?: unknown }).type;
    const text = `${current.name} ${current.message} ${typeof type === 'string' ? type : ''}`;
    if (/MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE|too large/i.test(text)) return true;
    current = current.cause;
  }
  return false;
}

/**
 * `headers` fitted so the copy (with `key` and `value`) is at most `maxBytes`: the largest
 * headers the runner did not write (and forged runner headers over 8 KiB) are dropped first;
 * with `minimal`, every header the runner did not write is dropped (the fallback when the broker
 * refused a copy as too large for a smaller topic limit). Each cut is named in `evgen-cut`.
 */
export function fitKafkaCopy(
  key: string,
  value: Buffer | string,
  headers: Readonly<Record<string, KafkaHeaderValue>>,
  options: { readonly maxBytes?: number; readonly minimal?: boolean } = {},
): Record<string, KafkaHeaderValue> {
  const limit = options.maxBytes ?? MAX_KAFKA_COPY_BYTES;
  const fitted: Record<string, KafkaHeaderValue> = { ...headers };
  delete fitted[KAFKA_CUT_HEADER];
  // Room for the cut record itself.
  let bytes = kafkaRecordBytes(key, value, fitted) + 4 * 1024;
  const cuts: string[] = [];
  const candidates = Object.keys(fitted)
    .map((name) => ({
      name,
      size: HEADER_OVERHEAD + Buffer.byteLength(name, 'utf8') + valueBytes(fitted[name]!),
    }))
    .filter(({ name, size }) => !isRunnerHeader(name) || size > MAX_KEPT_HEADER_BYTES)
    .sort((a, b) => b.size - a.size);
  for (const { name, size } of candidates) {
    if (!options.minimal && bytes <= limit) break;
    delete fitted[name];
    bytes -= size;
    cuts.push(name);
  }
  if (cuts.length === 0) {
    if (headers[KAFKA_CUT_HEADER] !== undefined)
      fitted[KAFKA_CUT_HEADER] = headers[KAFKA_CUT_HEADER];
    return fitted;
  }
  const record: Record<string, string> = {};
  const earlier = headerText(headers, KAFKA_CUT_HEADER);
  if (earlier !== undefined) record.earlier = earlier.slice(0, 1_000);
  for (const name of cuts.slice(0, MAX_CUT_ENTRIES))
    record[`header ${name.slice(0, 60)}`] = options.minimal
      ? 'dropped: the broker refused the copy as too large'
      : `dropped: the copy must fit ${limit} bytes`;
  if (cuts.length > MAX_CUT_ENTRIES)
    record['…'] = `${cuts.length - MAX_CUT_ENTRIES} more headers cut`;
  fitted[KAFKA_CUT_HEADER] = JSON.stringify(record);
  return fitted;
}

/** Where the record was first consumed: read from a retry copy, or the record itself. */
interface OriginalCoordinates {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly timestamp: string;
}

function originalCoordinates(record: KafkaInboundRecord, trusted: boolean): OriginalCoordinates {
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
 * How every copy starts (`copy-history.ts`). `trusted` says the record came from one of the
 * consumer's own retry topics: then its history headers are the runner's and kept; a main-topic
 * record's runner-owned headers are a sender's and dropped.
 */
function copyStart(
  record: KafkaInboundRecord,
  trusted: boolean,
  failure: FailureFacts,
): CopyStart<KafkaHeaderValue> {
  const original = originalCoordinates(record, trusted);
  return {
    received: record.headers,
    trusted,
    runnerOwned: isRunnerHeader,
    origin: {
      [H.originalTopic]: original.topic,
      [H.originalPartition]: String(original.partition),
      [H.originalOffset]: original.offset,
      [H.originalTimestamp]: original.timestamp,
    },
    failure,
  };
}

/** Headers of the retry copy for attempt `nextAttempt`, due at `dueAt`. */
export function retryCopyHeaders(
  record: KafkaInboundRecord,
  trusted: boolean,
  failure: FailureFacts,
  nextAttempt: number,
  dueAt: number,
): Record<string, KafkaHeaderValue> {
  return retryCopyHistory(H, copyStart(record, trusted, failure), nextAttempt, dueAt);
}

interface DeadLetterContext {
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
  const headers = deadLetterHistory(H, copyStart(record, trusted, failure), context);
  const original = originalCoordinates(record, trusted);
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
