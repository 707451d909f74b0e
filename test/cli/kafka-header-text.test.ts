/**
 * `dlq show` on Kafka prints Spring Kafka's binary dead-letter headers as what they mean: the
 * original partition and offset as numbers and the timestamp as a time, not escaped bytes.
 */
import { describe, expect, it } from 'vitest';
import { readableKafkaHeaders } from '../../src/runtime/kafka/consumer/readable-headers.js';
import {
  int32Header,
  int64Header,
  SPRING_DLT_HEADERS,
} from '../../src/runtime/kafka/consumer/consumer-headers.js';

describe('readableKafkaHeaders', () => {
  it("decodes Spring's big-endian partition, offset and timestamp, and every other byte header as UTF-8", () => {
    const ms = Date.UTC(2026, 11, 4, 1, 2, 3, 456);
    const decoded = readableKafkaHeaders({
      [SPRING_DLT_HEADERS.originalTopic]: Buffer.from('shop.order-created'),
      [SPRING_DLT_HEADERS.originalPartition]: int32Header(7),
      [SPRING_DLT_HEADERS.originalOffset]: int64Header('9007199254740993'),
      [SPRING_DLT_HEADERS.originalTimestamp]: int64Header(ms),
      [SPRING_DLT_HEADERS.originalTimestampType]: Buffer.from('CreateTime'),
      'evgen-error-type': 'NonRetryableError',
      absent: undefined,
    });
    expect(decoded).toEqual({
      'kafka_dlt-original-topic': 'shop.order-created',
      'kafka_dlt-original-partition': 7,
      'kafka_dlt-original-offset': '9007199254740993',
      'kafka_dlt-original-timestamp': `2026-12-04T01:02:03.456Z (${ms})`,
      'kafka_dlt-original-timestamp-type': 'CreateTime',
      'evgen-error-type': 'NonRetryableError',
    });
  });

  it('keeps a header that is not in the binary form as its text', () => {
    expect(
      readableKafkaHeaders({ [SPRING_DLT_HEADERS.originalPartition]: Buffer.from('ab') }),
    ).toEqual({ 'kafka_dlt-original-partition': 'ab' });
  });
});
