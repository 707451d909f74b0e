/**
 * Kafka record headers as an operator reads them: Spring Kafka's binary dead-letter headers
 * (`kafka_dlt-original-partition` a 4-byte, `-offset` and `-timestamp` 8-byte big-endian
 * numbers) as numbers and a time, every other byte header as UTF-8 text.
 */
import {
  readInt32Header,
  readInt64Header,
  SPRING_DLT_HEADERS,
  type KafkaRecordHeaders,
} from './consumer-headers.js';

function text(value: string | Buffer): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

/** One header's value: a number for Spring's partition, a decimal string for its offset, ISO time (and ms) for its timestamp. */
function readable(headers: KafkaRecordHeaders, name: string, value: string | Buffer): unknown {
  switch (name) {
    case SPRING_DLT_HEADERS.originalPartition:
      return readInt32Header(headers, name) ?? text(value);
    case SPRING_DLT_HEADERS.originalOffset:
      return readInt64Header(headers, name) ?? text(value);
    case SPRING_DLT_HEADERS.originalTimestamp: {
      const ms = readInt64Header(headers, name);
      if (ms === undefined) return text(value);
      const time = new Date(Number(ms));
      return Number.isNaN(time.getTime()) ? ms : `${time.toISOString()} (${ms})`;
    }
    default:
      return text(value);
  }
}

/** Every header with a value, decoded for reading. */
export function readableKafkaHeaders(headers: KafkaRecordHeaders): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) decoded[name] = readable(headers, name, value);
  return decoded;
}
