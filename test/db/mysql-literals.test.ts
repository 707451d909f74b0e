/**
 * The MySQL parameter inliner as pure logic: which literal each kind of value becomes, that only
 * `?` outside quotes and comments are parameters, and what it refuses. (What a server makes of
 * the literals, under a hostile sql_mode, is mysql-server-settings.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { inlineMysqlParameters, mysqlLiteral } from '../../src/runtime/db/mysql-literals.js';

describe('mysqlLiteral', () => {
  it('quotes a plain string with its quotes doubled', () => {
    expect(mysqlLiteral('abc')).toBe("'abc'");
    expect(mysqlLiteral('O\'Brien "x" `y` -- # /* */ ;')).toBe("'O''Brien \"x\" `y` -- # /* */ ;'");
    expect(mysqlLiteral('')).toBe("''");
    expect(mysqlLiteral('\u00e9\u{1F600}')).toBe("'\u00e9\u{1F600}'");
  });

  it('writes a string with a backslash, a ? or a control character as UTF-8 hex', () => {
    const hex = (text: string) => `_utf8mb4 X'${Buffer.from(text, 'utf8').toString('hex')}'`;
    for (const text of [
      "\\'",
      'a\\b',
      'what?',
      'tab\there',
      'nul\u0000',
      'del\u007f',
      '\u{1F600}\\',
    ])
      expect(mysqlLiteral(text), JSON.stringify(text)).toBe(hex(text));
    // Nothing of the value's own text is left to read: only hex digits between the quotes.
    expect(mysqlLiteral("\\'); DROP TABLE t; -- ")).toMatch(/^_utf8mb4 X'[0-9a-f]+'$/);
  });

  it('writes numbers, bigints, booleans, null, bytes and dates', () => {
    expect(mysqlLiteral(42)).toBe('42');
    expect(mysqlLiteral(1.5)).toBe('1.5');
    expect(mysqlLiteral(-3)).toBe('(-3)');
    expect(mysqlLiteral(12345678901234567890n)).toBe('12345678901234567890');
    expect(mysqlLiteral(-1n)).toBe('(-1)');
    expect(mysqlLiteral(true)).toBe('TRUE');
    expect(mysqlLiteral(false)).toBe('FALSE');
    expect(mysqlLiteral(null)).toBe('NULL');
    expect(mysqlLiteral(undefined)).toBe('NULL');
    expect(mysqlLiteral(Buffer.from([0, 0x27, 0x5c]))).toBe("X'00275c'");
    expect(mysqlLiteral(new Date('2026-01-02T03:04:05.678Z'))).toBe("'2026-01-02 03:04:05.678'");
  });

  it('writes an array as a list and an array of arrays as rows', () => {
    expect(mysqlLiteral(['1', 2, null])).toBe("'1', 2, NULL");
    expect(
      mysqlLiteral([
        [1, 'a'],
        [2, 'b?'],
      ]),
    ).toBe(`(1, 'a'), (2, _utf8mb4 X'${Buffer.from('b?').toString('hex')}')`);
  });

  it('refuses what has no literal', () => {
    expect(() => mysqlLiteral(Number.NaN)).toThrow(/finite number/);
    expect(() => mysqlLiteral(Number.POSITIVE_INFINITY)).toThrow(/finite number/);
    expect(() => mysqlLiteral({ a: 1 })).toThrow(/\[object Object\]/);
    expect(() => mysqlLiteral(Symbol('s'))).toThrow(TypeError);
  });
});

describe('inlineMysqlParameters', () => {
  it('fills each ? outside quotes and comments, in order', () => {
    expect(
      inlineMysqlParameters(
        'SELECT \'?\', `a?`, "b?" /* ? */ FROM t -- ?\nWHERE x = ? AND y IN (?) # ?\nLIMIT ?',
        ["it's", ['1', '2'], 10],
      ),
    ).toBe(
      "SELECT '?', `a?`, \"b?\" /* ? */ FROM t -- ?\nWHERE x = 'it''s' AND y IN ('1', '2') # ?\nLIMIT 10",
    );
    expect(inlineMysqlParameters('SELECT 1')).toBe('SELECT 1');
  });

  it('refuses a count of parameters that does not match the statement', () => {
    expect(() => inlineMysqlParameters('SELECT ?', [])).toThrow(/1 parameter\(s\) but was given 0/);
    expect(() => inlineMysqlParameters('SELECT ?', [1, 2])).toThrow(/given 2/);
  });

  it('gives the same text for the same statement and values, cached or not', () => {
    const text = 'UPDATE t SET a = ? WHERE id = ?';
    const first = inlineMysqlParameters(text, ['x', 1]);
    expect(inlineMysqlParameters(text, ['x', 1])).toBe(first);
    expect(inlineMysqlParameters(text, ['y', 2])).toBe("UPDATE t SET a = 'y' WHERE id = 2");
  });
});
