import { describe, expect, it } from 'vitest';
import {
  KAFKA_CONSUMER_HEADERS as H,
  SPRING_DLT_HEADERS as S,
  headerInteger,
  headerText,
  headerTime,
  int32Header,
  int64Header,
  isRunnerHeader,
  readInt32Header,
  readInt64Header,
  withoutRunnerHeaders,
} from '../../src/runtime/kafka/consumer/consumer-headers.js';

describe('Kafka consumer headers', () => {
  it("encodes Spring's int and long headers big-endian, as Java's ByteBuffer does", () => {
    expect(int32Header(3).toString('hex')).toBe('00000003');
    expect(int32Header(-1).toString('hex')).toBe('ffffffff');
    expect(int64Header(258n).toString('hex')).toBe('0000000000000102');
    expect(int64Header('9007199254740993').toString('hex')).toBe('0020000000000001');
    const headers = { p: int32Header(7), o: int64Header('9007199254740993'), t: '42' };
    expect(readInt32Header(headers, 'p')).toBe(7);
    expect(readInt64Header(headers, 'o')).toBe('9007199254740993'); // beyond 2^53, exact
    expect(readInt32Header(headers, 't')).toBe(42);
    expect(readInt64Header(headers, 't')).toBe('42');
    expect(readInt32Header(headers, 'missing')).toBeUndefined();
  });

  it('reads text, integers and times from strings or buffers, and nothing from junk', () => {
    const headers = {
      a: Buffer.from('12'),
      b: 'x12',
      c: '2026-01-02T03:04:05.000Z',
      d: 'not a time',
      e: '',
    };
    expect(headerText(headers, 'a')).toBe('12');
    expect(headerText(headers, 'e')).toBeUndefined();
    expect(headerInteger(headers, 'a')).toBe(12);
    expect(headerInteger(headers, 'b')).toBeUndefined();
    expect(headerTime(headers, 'c')).toBe(Date.parse('2026-01-02T03:04:05.000Z'));
    expect(headerTime(headers, 'd')).toBeUndefined();
  });

  it('strips every runner-owned header (evgen retry/diagnostic names and kafka_dlt-*), keeps the rest', () => {
    const received = {
      traceparent: 'tp',
      messageId: 'm-1',
      [H.attempt]: '99',
      [H.retryDueAt]: '2999-01-01T00:00:00.000Z',
      [H.errorType]: 'Forged',
      [S.originalTopic]: 'elsewhere',
      'kafka_dlt-anything-new': 'x',
      absent: undefined,
    };
    expect(withoutRunnerHeaders(received)).toEqual({ traceparent: 'tp', messageId: 'm-1' });
    expect(isRunnerHeader(H.replays)).toBe(true);
    expect(isRunnerHeader('eventType')).toBe(false);
  });
});
