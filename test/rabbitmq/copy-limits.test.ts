/**
 * Fitting a copy of a received message to what amqplib can encode (pure): the cut is named, the
 * runner's own headers stay, distribution headers never travel. The encoded size is checked
 * against amqplib's own encoder, not only against our estimate.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CUT_HEADER,
  MAX_COPY_HEADER_BYTES,
  encodedTableBytes,
  fitCopy,
} from '../../src/runtime/rabbitmq/copy-limits.js';
import { copyPublishProperties } from '../../src/runtime/rabbitmq/amqp-message.js';
import type { MessageProperties } from 'amqplib';

const keepEvgen = (name: string) => name.startsWith('x-evgen-');
const invented = () => 'invented-id';

// amqplib's own encoder (not exported: loaded by file path).
const require = createRequire(import.meta.url);
const amqplibDefs: unknown = require(join(dirname(require.resolve('amqplib')), 'lib', 'defs.js'));

/** Encodes basic properties as amqplib does when publishing: throws when they do not fit. */
function encode(properties: object): Buffer {
  const defs = amqplibDefs as {
    encodeProperties(id: number, channel: number, size: number, fields: object): Buffer;
    BasicProperties: number;
  };
  return defs.encodeProperties(defs.BasicProperties, 1, 0, {
    ...properties,
    deliveryMode: 2,
  });
}

describe('fitCopy', () => {
  it('leaves a copy that fits untouched, without an x-evgen-cut header', () => {
    const properties = { messageId: 'm-1', type: 't', headers: { a: 'x', 'x-evgen-attempt': 2 } };
    expect(fitCopy(properties, keepEvgen, invented)).toEqual(properties);
  });

  it('drops a shortstr property over 255 bytes and invents a messageId, naming both', () => {
    const fitted = fitCopy(
      { messageId: 'm'.repeat(300), correlationId: 'c'.repeat(256), type: 't', headers: {} },
      keepEvgen,
      invented,
    );
    expect(fitted.messageId).toBe('invented-id');
    expect(fitted.correlationId).toBeUndefined();
    expect(fitted.type).toBe('t');
    expect(JSON.parse(String(fitted.headers![CUT_HEADER]))).toEqual({
      'property correlationId': 'dropped: 256 bytes, an AMQP shortstr holds 255',
      'property messageId': 'dropped: 300 bytes, an AMQP shortstr holds 255',
    });
    expect(() => encode(fitted)).not.toThrow();
  });

  it('drops the largest foreign headers until the table fits, keeps the runner’s own, and amqplib encodes it', () => {
    const headers = {
      'x-producer-blob': 'b'.repeat(100 * 1024),
      'x-second-blob': 's'.repeat(30 * 1024),
      small: 'kept',
      'x-evgen-last-error': 'e'.repeat(2_000),
    };
    expect(() => encode({ messageId: 'm', headers })).toThrow(/exceeds/);
    const fitted = fitCopy({ messageId: 'm', headers }, keepEvgen, invented);
    expect(Object.keys(fitted.headers).sort()).toEqual(
      [CUT_HEADER, 'small', 'x-evgen-last-error', 'x-second-blob'].sort(),
    );
    expect(JSON.parse(String(fitted.headers![CUT_HEADER]))).toEqual({
      'header x-producer-blob': expect.stringMatching(/^dropped: 102\d{3} bytes/),
    });
    expect(encodedTableBytes(fitted.headers)).toBeLessThanOrEqual(MAX_COPY_HEADER_BYTES);
    expect(() => encode(fitted)).not.toThrow();
  });

  it('drops a runner header only when it is larger than any the runner writes (forged)', () => {
    const fitted = fitCopy(
      { messageId: 'm', headers: { 'x-evgen-trace-id': 't'.repeat(70 * 1024) } },
      keepEvgen,
      invented,
    );
    expect(fitted.headers!['x-evgen-trace-id']).toBeUndefined();
    expect(String(fitted.headers![CUT_HEADER])).toContain('header x-evgen-trace-id');
  });

  it('never copies CC or BCC (sender-selected distribution), whatever their case', () => {
    const fitted = fitCopy(
      { messageId: 'm', headers: { CC: ['victim'], bcc: ['other'], keep: 1 } },
      keepEvgen,
      invented,
    );
    expect(fitted.headers).toEqual({
      keep: 1,
      [CUT_HEADER]: JSON.stringify({
        'header CC': 'dropped: sender-selected distribution is never copied',
        'header bcc': 'dropped: sender-selected distribution is never copied',
      }),
    });
  });

  it('keeps the cuts an earlier copy recorded, and stays small with thousands of cut headers', () => {
    const earlier = JSON.stringify({ 'header x-old': 'dropped: 99999 bytes' });
    const many = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [`h${'é'.repeat(100)}${i}`, 'v'.repeat(40)]),
    );
    const fitted = fitCopy(
      { messageId: 'm', headers: { ...many, [CUT_HEADER]: earlier } },
      keepEvgen,
      invented,
    );
    const cut = JSON.parse(String(fitted.headers![CUT_HEADER])) as Record<string, string>;
    expect(cut['header x-old']).toBe('dropped: 99999 bytes');
    expect(cut['…']).toMatch(/^\d+ more fields cut$/);
    expect(encodedTableBytes(fitted.headers)).toBeLessThanOrEqual(MAX_COPY_HEADER_BYTES);
    expect(() => encode(fitted)).not.toThrow();
  });

  it('is what every copy goes through (copyPublishProperties)', () => {
    const copy = copyPublishProperties(
      { messageId: 'm-1', headers: {} } as unknown as MessageProperties,
      { CC: ['victim'], 'x-producer-blob': 'b'.repeat(100 * 1024) },
    );
    expect(copy.headers!.CC).toBeUndefined();
    expect(copy.headers!['x-producer-blob']).toBeUndefined();
    expect(copy.messageId).toBe('m-1');
  });
});
