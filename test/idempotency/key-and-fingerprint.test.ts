/** The key rule and the default fingerprint rule (pure logic). */
import { describe, expect, it } from 'vitest';
import {
  IdempotencyKeyError,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  canonicalJson,
  defaultRequestFingerprint,
  parseIdempotencyKey,
  requestEventMessageId,
} from 'evgen/runtime';

function problemOf(value: Parameters<typeof parseIdempotencyKey>[0]): string {
  try {
    parseIdempotencyKey(value);
  } catch (error) {
    expect(error).toBeInstanceOf(IdempotencyKeyError);
    return (error as IdempotencyKeyError).problem;
  }
  return 'accepted';
}

describe('parseIdempotencyKey', () => {
  it('accepts a bare value and the draft’s structured-field string as the same key', () => {
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    expect(parseIdempotencyKey(['req-1'])).toBe('req-1');
  });

  it('refuses missing, empty, over-long and non-ASCII keys, each with its reason', () => {
    expect(problemOf(undefined)).toBe('missing');
    expect(problemOf('')).toBe('empty');
    expect(problemOf('   ')).toBe('empty');
    expect(problemOf('""')).toBe('empty');
    expect(problemOf(['a', 'b'])).toBe('empty');
    expect(problemOf('x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH))).toBe('accepted');
    expect(problemOf('x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1))).toBe('too-long');
    expect(problemOf('clé-1')).toBe('not-ascii');
    expect(problemOf('a\tb')).toBe('not-ascii');
    expect(problemOf('a"b')).toBe('not-ascii');
  });
});

describe('defaultRequestFingerprint', () => {
  const base = { method: 'POST', path: '/orders', body: { a: 1, b: { c: [1, 2], d: 'x' } } };

  it('ignores key order and formatting of a JSON body', () => {
    expect(canonicalJson({ b: { d: 'x', c: [1, 2] }, a: 1 })).toBe(
      '{"a":1,"b":{"c":[1,2],"d":"x"}}',
    );
    expect(defaultRequestFingerprint({ ...base, body: { b: { d: 'x', c: [1, 2] }, a: 1 } })).toBe(
      defaultRequestFingerprint(base),
    );
    expect(defaultRequestFingerprint({ ...base, method: 'post' })).toBe(
      defaultRequestFingerprint(base),
    );
  });

  it('differs for another method, path, query or body', () => {
    const fp = defaultRequestFingerprint(base);
    expect(defaultRequestFingerprint({ ...base, method: 'PUT' })).not.toBe(fp);
    expect(defaultRequestFingerprint({ ...base, path: '/orders?x=1' })).not.toBe(fp);
    expect(defaultRequestFingerprint({ ...base, body: { a: 2, b: base.body.b } })).not.toBe(fp);
    expect(defaultRequestFingerprint({ ...base, body: undefined })).not.toBe(fp);
  });
});

describe('requestEventMessageId', () => {
  it('is a UUID v5 fixed by key, fingerprint and position', () => {
    const id = requestEventMessageId('k', 'fp', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(requestEventMessageId('k', 'fp', 0)).toBe(id);
    expect(requestEventMessageId('k', 'fp', 1)).not.toBe(id);
    expect(requestEventMessageId('k', 'fp2', 0)).not.toBe(id);
    expect(requestEventMessageId('k2', 'fp', 0)).not.toBe(id);
  });
});
