/**
 * Headers the Kafka consumer runner writes on retry copies and dead letters.
 *
 * Two families:
 * - `evgen-*`: evgen's own, text values (decimal numbers, ISO-8601 times), read back by the runner
 *   on its retry topics and by `listKafkaDeadLetters`;
 * - `kafka_dlt-*`: the names and binary encodings Spring Kafka's dead-letter publisher uses
 *   (partition: 4-byte big-endian int; offset and timestamp: 8-byte big-endian long; the rest
 *   UTF-8 text), so existing Kafka tooling reads evgen's dead letters as it reads Spring's.
 *
 * None of them is trusted on a record from a main topic: a producer could otherwise force a dead
 * letter (an attempt header past the limit), delay a partition (a due time far away) or forge
 * diagnostics. The runner only reads them on its own retry topics and drops them from every
 * copy it makes of a main-topic record (see `withoutRunnerHeaders`).
 */

/** A header value as the Kafka clients hand it over. */
export type KafkaHeaderValue = string | Buffer;
export type KafkaRecordHeaders = Readonly<Record<string, KafkaHeaderValue | undefined>>;

export const KAFKA_CONSUMER_HEADERS = Object.freeze({
  /** The handling attempt this record is (1 for a main-topic record, whatever it carries). */
  attempt: 'evgen-attempt',
  /** When a retry copy may be handled (ISO-8601); the runner pauses the partition until then. */
  retryDueAt: 'evgen-retry-due-at',
  firstFailureAt: 'evgen-first-failure-at',
  lastFailureAt: 'evgen-last-failure-at',
  lastErrorType: 'evgen-last-error-type',
  lastError: 'evgen-last-error',
  /** Where the record was first consumed; kept across retry hops so the dead letter names it. */
  originalTopic: 'evgen-original-topic',
  originalPartition: 'evgen-original-partition',
  originalOffset: 'evgen-original-offset',
  originalTimestamp: 'evgen-original-timestamp',
  // Dead-letter diagnostics.
  errorType: 'evgen-error-type',
  errorMessage: 'evgen-error-message',
  attempts: 'evgen-attempts',
  consumer: 'evgen-consumer',
  deadLetteredAt: 'evgen-dead-lettered-at',
  traceId: 'evgen-dlt-trace-id',
  /** What a copy left off to fit the broker's record limit (JSON: field -> why). */
  cut: 'evgen-cut',
  // Set by replayKafkaDeadLetters on the copy it sends back.
  replays: 'evgen-replays',
  replayedAt: 'evgen-replayed-at',
});

/** Spring Kafka's dead-letter header names (`KafkaHeaders.DLT_*`). */
export const SPRING_DLT_HEADERS = Object.freeze({
  originalTopic: 'kafka_dlt-original-topic',
  originalPartition: 'kafka_dlt-original-partition',
  originalOffset: 'kafka_dlt-original-offset',
  originalTimestamp: 'kafka_dlt-original-timestamp',
  originalTimestampType: 'kafka_dlt-original-timestamp-type',
  originalConsumerGroup: 'kafka_dlt-original-consumer-group',
  exceptionFqcn: 'kafka_dlt-exception-fqcn',
  exceptionCauseFqcn: 'kafka_dlt-exception-cause-fqcn',
  exceptionMessage: 'kafka_dlt-exception-message',
  exceptionStacktrace: 'kafka_dlt-exception-stacktrace',
});

const RUNNER_HEADER_NAMES: ReadonlySet<string> = new Set(Object.values(KAFKA_CONSUMER_HEADERS));

/** Whether the runner owns this header name (and so never trusts it from a producer). */
export function isRunnerHeader(name: string): boolean {
  return RUNNER_HEADER_NAMES.has(name) || name.startsWith('kafka_dlt-');
}

/** The headers minus every runner-owned one: what a copy of a main-topic record starts from. */
export function withoutRunnerHeaders(
  headers: KafkaRecordHeaders,
): Record<string, KafkaHeaderValue> {
  const kept: Record<string, KafkaHeaderValue> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !isRunnerHeader(name)) kept[name] = value;
  }
  return kept;
}

/** A header as UTF-8 text, or undefined when absent or empty. */
export function headerText(headers: KafkaRecordHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  return text === undefined || text === '' ? undefined : text;
}

/** A decimal-text header as a safe integer, or undefined. */
export function headerInteger(headers: KafkaRecordHeaders, name: string): number | undefined {
  const text = headerText(headers, name);
  if (text === undefined || !/^-?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** An ISO-8601 header as epoch ms, or undefined when absent or unparseable. */
export function headerTime(headers: KafkaRecordHeaders, name: string): number | undefined {
  const text = headerText(headers, name);
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Spring's encoding of an int header: 4 bytes, big-endian. */
export function int32Header(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

/** Spring's encoding of a long header: 8 bytes, big-endian. */
export function int64Header(value: bigint | number | string): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(BigInt(value));
  return buffer;
}

/** Reads a Spring int header (4 bytes), also accepting decimal text; undefined otherwise. */
export function readInt32Header(headers: KafkaRecordHeaders, name: string): number | undefined {
  const value = headers[name];
  if (Buffer.isBuffer(value) && value.length === 4) return value.readInt32BE(0);
  return headerInteger(headers, name);
}

/** Reads a Spring long header (8 bytes) as a decimal string, also accepting decimal text. */
export function readInt64Header(headers: KafkaRecordHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Buffer.isBuffer(value) && value.length === 8) return value.readBigInt64BE(0).toString();
  const text = headerText(headers, name);
  return text !== undefined && /^-?\d{1,19}$/.test(text) ? text : undefined;
}
