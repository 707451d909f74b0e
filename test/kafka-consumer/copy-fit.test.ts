/**
 * Fitting a Kafka retry copy or dead letter to the broker's record limit (pure): the largest
 * headers the runner did not write go first and are named in `evgen-cut`; the runner's own stay.
 */
import { describe, expect, it } from 'vitest';
import {
  KAFKA_CUT_HEADER,
  MAX_KAFKA_COPY_BYTES,
  fitKafkaCopy,
  isRecordTooLarge,
  kafkaRecordBytes,
} from '../../src/runtime/kafka/consumer/dead-letter-record.js';

const runnerHeaders = { 'evgen-attempt': '2', 'kafka_dlt-exception-message': 'boom' };

describe('fitKafkaCopy', () => {
  it('leaves a copy within the limit untouched', () => {
    const headers = { a: 'x', ...runnerHeaders };
    expect(fitKafkaCopy('k', 'v', headers)).toEqual(headers);
  });

  it('drops the largest foreign header until the copy fits, keeping the runner’s and small ones', () => {
    const headers = { blob: 'b'.repeat(1_040_000), small: 's', ...runnerHeaders };
    const fitted = fitKafkaCopy('k', 'v'.repeat(300), headers);
    expect(fitted.blob).toBeUndefined();
    expect(fitted).toMatchObject({ small: 's', ...runnerHeaders });
    expect(JSON.parse(String(fitted[KAFKA_CUT_HEADER]))).toEqual({
      'header blob': `dropped: the copy must fit ${MAX_KAFKA_COPY_BYTES} bytes`,
    });
    expect(kafkaRecordBytes('k', 'v'.repeat(300), fitted)).toBeLessThanOrEqual(
      MAX_KAFKA_COPY_BYTES,
    );
  });

  it('minimal: every header the runner did not write is dropped, the earlier cut kept', () => {
    const fitted = fitKafkaCopy(
      'k',
      'v',
      { a: '1', b: '2', ...runnerHeaders, [KAFKA_CUT_HEADER]: '{"header x":"dropped"}' },
      { minimal: true },
    );
    expect(Object.keys(fitted).sort()).toEqual(
      [KAFKA_CUT_HEADER, ...Object.keys(runnerHeaders)].sort(),
    );
    expect(JSON.parse(String(fitted[KAFKA_CUT_HEADER]))).toMatchObject({
      earlier: '{"header x":"dropped"}',
      'header a': 'dropped: the broker refused the copy as too large',
    });
  });

  it('tells a too-large refusal from other send failures', () => {
    const kafkajs = Object.assign(
      new Error(
        'The request included a message larger than the max message size the server will accept',
      ),
      { type: 'MESSAGE_TOO_LARGE' },
    );
    expect(isRecordTooLarge(kafkajs)).toBe(true);
    expect(isRecordTooLarge(new Error('send failed', { cause: kafkajs }))).toBe(true);
    expect(isRecordTooLarge(new Error('Connection refused'))).toBe(false);
  });
});
