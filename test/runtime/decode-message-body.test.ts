import { describe, expect, it } from 'vitest';
import { MessageBodyError, type MessageBodyProblem } from 'evgen/runtime';
import { decodeMessageBody } from '../../src/runtime/decode-message-body.js';

function problemOf(content: Uint8Array | string, limits = {}): MessageBodyProblem | 'none' {
  try {
    decodeMessageBody(content, limits);
    return 'none';
  } catch (error) {
    expect(error).toBeInstanceOf(MessageBodyError);
    expect((error as MessageBodyError).retryable).toBe(false);
    return (error as MessageBodyError).problem;
  }
}

function messageOf(content: string): string {
  try {
    decodeMessageBody(content);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('decodeMessageBody', () => {
  it('decodes bytes and text of a JSON value', () => {
    expect(decodeMessageBody(Buffer.from('{"a":[1,-2.5e3,"x\\"]"]}'))).toEqual({
      a: [1, -2500, 'x"]'],
    });
    expect(decodeMessageBody('{"n":9007199254740991,"m":-9007199254740991}')).toEqual({
      n: 9007199254740991,
      m: -9007199254740991,
    });
  });

  it('refuses a body above maxBytes (default 1 MiB) before parsing it', () => {
    const big = `{"x":"${'a'.repeat(1_048_576)}"}`;
    expect(problemOf(Buffer.from(big))).toBe('too-large');
    expect(problemOf(big)).toBe('too-large');
    expect(problemOf('{"x":"abcdef"}', { maxBytes: 10 })).toBe('too-large');
    expect(problemOf(Buffer.from(big), { maxBytes: 2_000_000 })).toBe('none');
  });

  it('refuses nesting deeper than maxDepth (default 64), brackets inside strings do not count', () => {
    expect(problemOf(`${'['.repeat(65)}${']'.repeat(65)}`)).toBe('too-deep');
    expect(problemOf(`${'['.repeat(64)}${']'.repeat(64)}`)).toBe('none');
    expect(problemOf(`{"a":"${'['.repeat(1000)}"}`)).toBe('none');
    expect(problemOf('{"a":{"b":{}}}', { maxDepth: 2 })).toBe('too-deep');
    // A deeply nested attack never reaches JSON.parse.
    expect(problemOf('['.repeat(1_000_000))).toBe('too-deep');
  });

  it('refuses too deep nesting the same way in short bodies (parsed first) and long ones', () => {
    // Short bodies are parsed before their depth is checked, long ones only after their brackets
    // are counted: the verdict and the reported place are the same either way.
    const deepAt = (padding: number) =>
      `{"pad":"${' '.repeat(padding)}","v":${'['.repeat(65)}${']'.repeat(65)}}`;
    const short = messageOf(deepAt(0));
    const long = messageOf(deepAt(3_000));
    expect(short).toMatch(/deeper than 64 levels \(at character 77\)/);
    expect(long).toMatch(/deeper than 64 levels \(at character 3077\)/);
    // Malformed as well as too deep: too deep, as for a long body whose scan runs first.
    expect(problemOf('['.repeat(100))).toBe('too-deep');
    expect(problemOf(`{"a":${'['.repeat(65)}`)).toBe('too-deep');
    expect(problemOf('[[[')).toBe('invalid-json');
    // Many brackets, none too deep: a long body is counted, scanned, and accepted.
    const wide = `[${Array.from({ length: 800 }, () => '[]').join(',')}]`;
    expect(wide.length).toBeGreaterThan(2_048);
    expect(problemOf(wide)).toBe('none');
    expect(problemOf(`[${'{"a":[]},'.repeat(300)}1e400]`)).toBe('unsafe-integer');
    // A depth limit of one level: an object holding an object is refused, a flat one is not.
    expect(problemOf('{"a":{}}', { maxDepth: 1 })).toBe('too-deep');
    expect(problemOf('{"a":1,"b":[1]}', { maxDepth: 2 })).toBe('none');
    expect(problemOf('[[1]]', { maxDepth: 1 })).toBe('too-deep');
  });

  it('refuses invalid UTF-8 instead of replacing it with U+FFFD', () => {
    expect(problemOf(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toBe(
      'invalid-utf8',
    );
    expect(problemOf(Buffer.from([0x22, 0xc3, 0x22]))).toBe('invalid-utf8');
    expect(problemOf('"\uD800"')).toBe('invalid-utf8');
    expect(problemOf(Buffer.from('"é€😀"'))).toBe('none');
  });

  it('refuses numbers beyond ±(2^53 − 1) in every notation, and literals beyond a double', () => {
    expect(problemOf('{"n":9007199254740992}')).toBe('unsafe-integer');
    expect(problemOf('{"n":9007199254740993}')).toBe('unsafe-integer');
    expect(problemOf('[-123456789012345678901234567890]')).toBe('unsafe-integer');
    expect(problemOf('-9007199254740993')).toBe('unsafe-integer');
    expect(problemOf('9007199254740991')).toBe('none');
    expect(problemOf('{"s":"9007199254740993"}')).toBe('none');
    // Exponent and decimal forms of integers JavaScript rounds (…993 arrives as …992).
    expect(problemOf('{"n":12345678901234567e0}')).toBe('unsafe-integer');
    expect(problemOf('{"n":9007199254740993.0}')).toBe('unsafe-integer');
    expect(problemOf('{"n":-9.007199254740993e15}')).toBe('unsafe-integer');
    expect(problemOf('{"n":90071992547409930.5}')).toBe('unsafe-integer');
    // Beyond ±(2^53 − 1) whatever its exactness, as the writers refuse it.
    expect(problemOf('{"n":1e20}')).toBe('unsafe-integer');
    // Beyond a double: it would arrive as Infinity.
    expect(problemOf('{"n":1e400}')).toBe('unsafe-integer');
    expect(problemOf('{"n":-1e400}')).toBe('unsafe-integer');
    expect(problemOf('1e400')).toBe('unsafe-integer');
    expect(messageOf('{"n":1e400}')).toContain('Infinity');
    // Safe values in these notations pass.
    expect(problemOf('{"n":9007199254740991.0,"m":1.5e10,"k":1e-400,"j":-0.5}')).toBe('none');
    expect(problemOf('{"a":[1e3,{"b":9007199254740993}]}')).toBe('unsafe-integer');
    // Over the bracket count of the fast path: the full scan decides.
    const many = `[${Array.from({ length: 70 }, () => '[1]').join(',')}, 9007199254740993]`;
    expect(problemOf(many)).toBe('unsafe-integer');
    const manyExponent = `[${Array.from({ length: 70 }, () => '[1]').join(',')}, 1e400]`;
    expect(problemOf(manyExponent)).toBe('unsafe-integer');
    expect(problemOf(`[${Array.from({ length: 70 }, () => '[1.5e3]').join(',')}]`)).toBe('none');
  });

  it('reports bad JSON as invalid-json', () => {
    expect(problemOf('not json')).toBe('invalid-json');
    expect(problemOf(Buffer.alloc(0))).toBe('invalid-json');
  });

  it('refuses nonsensical limits', () => {
    expect(() => decodeMessageBody('{}', { maxBytes: 0 })).toThrow(RangeError);
    expect(() => decodeMessageBody('{}', { maxDepth: 1.5 })).toThrow(RangeError);
  });
});
