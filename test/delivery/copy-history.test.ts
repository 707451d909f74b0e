/**
 * The one rule Kafka's and Pulsar's copies share (copy-history.ts), read through both
 * transports' shaping: a copy of a main-topic message drops the runner-owned headers a sender
 * set, a copy of a retry-topic message keeps its history (first failure, original coordinates),
 * and a dead letter carries the diagnostics but no due time.
 */
import { describe, expect, it } from 'vitest';
import {
  deadLetterHeaders,
  retryCopyHeaders,
} from '../../src/runtime/kafka/consumer/dead-letter-record.js';
import {
  deadLetterProperties,
  retryCopyProperties,
} from '../../src/runtime/pulsar/consumer/pulsar-copies.js';
import type { KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import type { PulsarInboundMessage } from '../../src/runtime/pulsar/pulsar-client.js';
import type { DeadLetterFacts } from '../../src/runtime/delivery/failure.js';

const failure = { errorType: 'TypeError', message: 'boom', at: new Date('2026-01-02T03:04:05Z') };
const forged = {
  'evgen-first-failure-at': '1999-01-01T00:00:00.000Z',
  'evgen-original-topic': 'elsewhere',
  'evgen-attempt': '7',
  'trace-parent': 'kept',
};

const kafkaRecord = (headers: Record<string, string>): KafkaInboundRecord => ({
  topic: 'orders',
  partition: 2,
  offset: '40',
  timestamp: '1700000000000',
  key: 'k',
  value: Buffer.from('{}'),
  headers,
});
const pulsarMessage = (properties: Record<string, string>) =>
  ({
    topic: 'persistent://public/default/orders',
    messageId: 'CAEQAQ==',
    key: 'k',
    payload: Buffer.from('{}'),
    properties,
  }) as unknown as PulsarInboundMessage;

const transports = [
  {
    name: 'Kafka',
    retry: (headers: Record<string, string>, trusted: boolean) =>
      retryCopyHeaders(
        kafkaRecord(headers),
        trusted,
        failure,
        2,
        Date.parse('2026-01-02T03:05:00Z'),
      ),
    dead: (headers: Record<string, string>, trusted: boolean) =>
      deadLetterHeaders(kafkaRecord(headers), trusted, failure, {
        consumer: 'billing',
        groupId: 'g',
        attempts: 3,
      }),
    originalTopic: 'orders',
    /** A retry copy's coordinates of the first consumption (all of them, or none is believed). */
    carried: { 'evgen-original-partition': '5', 'evgen-original-offset': '9' } as Record<
      string,
      string
    >,
  },
  {
    name: 'Pulsar',
    retry: (properties: Record<string, string>, trusted: boolean) =>
      retryCopyProperties(
        pulsarMessage(properties),
        trusted,
        failure,
        2,
        Date.parse('2026-01-02T03:05:00Z'),
      ),
    dead: (properties: Record<string, string>, trusted: boolean) =>
      deadLetterProperties(pulsarMessage(properties), trusted, {
        consumer: 'billing',
        attempts: 3,
        failure,
        traceId: undefined,
      } as unknown as DeadLetterFacts),
    originalTopic: 'persistent://public/default/orders',
    carried: { 'evgen-original-message-id': 'CAEQBQ==' } as Record<string, string>,
  },
];

describe.each(transports)('$name copies', (transport) => {
  it("a main-topic message's copy drops what a sender forged and starts the history now", () => {
    const copy = transport.retry(forged, false);
    expect(copy['trace-parent']).toBe('kept');
    expect(copy['evgen-first-failure-at']).toBe('2026-01-02T03:04:05.000Z');
    expect(copy['evgen-original-topic']).toBe(transport.originalTopic);
    expect(copy['evgen-attempt']).toBe('2');
    expect(copy['evgen-retry-due-at']).toBe('2026-01-02T03:05:00.000Z');
    expect(copy['evgen-last-error-type']).toBe('TypeError');
  });

  it("a retry-topic message's copy keeps its first failure and original topic", () => {
    const copy = transport.retry({ ...forged, ...transport.carried }, true);
    expect(copy).toMatchObject(transport.carried);
    expect(copy['evgen-first-failure-at']).toBe('1999-01-01T00:00:00.000Z');
    expect(copy['evgen-original-topic']).toBe('elsewhere');
    expect(copy['evgen-last-failure-at']).toBe('2026-01-02T03:04:05.000Z');
  });

  it('a dead letter carries the diagnostics and no due time', () => {
    const letter = transport.dead({ ...forged, 'evgen-retry-due-at': 'x' }, true);
    expect(letter['evgen-retry-due-at']).toBeUndefined();
    expect(letter['evgen-attempt']).toBe('3');
    expect(letter['evgen-attempts']).toBe('3');
    expect(letter['evgen-consumer']).toBe('billing');
    expect(letter['evgen-error-message']).toBe('boom');
    expect(letter['evgen-dead-lettered-at']).toBe('2026-01-02T03:04:05.000Z');
    expect(letter['evgen-dlt-trace-id']).toBeUndefined();
  });
});
