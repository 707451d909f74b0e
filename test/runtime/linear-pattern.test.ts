/**
 * The linear-time pattern engine keeps ECMAScript's meaning (unicode mode, as ajv compiles
 * patterns): each pattern gives what `new RegExp(pattern, 'u').test` gives on every probe, where
 * RE2's own syntax would differ (`.`, `\s`, `\u` escapes, empty classes, astral characters).
 * Back references and lookahead are refused by name.
 */
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  UnsupportedPatternError,
  linearPattern,
  linearPatternError,
  toRe2Syntax,
} from '../../src/runtime/linear-pattern.js';

const PROBES = [
  '',
  'a',
  'ab',
  'abc',
  'A1',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u2028',
  '\u00a0',
  '\u3000',
  '\ufeff',
  '\u000b',
  'x y',
  '😀',
  'a😀b',
  '\u00e9',
  'α',
  '-',
  ']',
  '\\',
  '$12',
  'a.b',
  'a{2}',
  '\u0008',
  '2026-01-02',
  'EUR',
  'eur',
  'foo-bar',
  'k=v',
  '/',
  '\u0001',
];

const PATTERNS = [
  '^.$',
  '^..$',
  'a.c',
  '^\\s$',
  '^\\S$',
  '^[\\s]$',
  '^[\\S]$',
  '^[^\\s]$',
  '^[^\\S]$',
  '^[\\sa]+$',
  '^\\w+$',
  '^\\W$',
  '^\\d{4}-\\d{2}-\\d{2}$',
  '^[\\d-]+$',
  '\\bfoo\\b',
  '\\Bb', // a bare \B: V8 also tries the middle of a surrogate pair, which the spec (and RE2) skip
  '^[A-Z]{3}$',
  '^[a-z0-9]+(-[a-z0-9]+)*$',
  '^(?:a|b)+$',
  '^(?<name>a)b',
  '^\\u00e9$',
  '^\\u{1F600}$',
  '^\\uD83D\\uDE00$',
  '^[\\u{1F600}-\\u{1F64F}]$',
  '^\\x41\\d$',
  '^\\t$',
  '^\\v$',
  '^\\cA$',
  '^[\\b]$',
  '^\\0?$',
  '^[]$',
  '^[^]$',
  '[^]',
  '^\\$\\d+$',
  '^a\\.b$',
  '^a\\{2\\}$',
  '^[\\]\\\\-]$',
  '^\\/$',
  '^\\p{L}+$',
  '^\\P{L}$',
  '^\\p{Lu}',
  '^\\p{Letter}$',
  '^\\p{Script=Greek}$',
  '^\\p{gc=Nd}$',
  '^[\\p{L}\\d]+$',
  '(?<=\\$)\\d+',
  '(?<!a)b',
  'a{2,}',
  'a{0,1}?b',
  'x|',
  '^$',
  'y$',
  '😀',
  '^[😀]$',
];

describe('linearPattern', () => {
  for (const pattern of PATTERNS)
    it(`means what ECMAScript means: ${JSON.stringify(pattern)}`, () => {
      const native = new RegExp(pattern, 'u');
      const linear = linearPattern(pattern, 'u');
      // The RE2 rewrite itself, also for patterns that stay on RegExp.
      const { source, lookbehind } = toRe2Syntax(pattern);
      const re2 = RE2JS.compile(source, lookbehind ? RE2JS.LOOKBEHINDS : 0);
      for (const probe of PROBES) {
        const expected = native.test(probe);
        expect([probe, linear.test(probe), re2.test(probe)]).toEqual([probe, expected, expected]);
      }
    });

  it('refuses back references and lookahead with the reason', () => {
    for (const [pattern, reason] of [
      ['^(a+)\\1$', /back reference/],
      ['^(?<w>a)\\k<w>$', /back reference/],
      ['^(?=.*\\d).+$', /lookahead/],
      ['^(?!x-).+$', /lookahead/],
      ['^\\p{Script_Extensions=Greek}$', /Script_Extensions/],
      ['a{1001}', /repeat count/],
    ] as const) {
      expect(() => linearPattern(pattern, 'u')).toThrow(UnsupportedPatternError);
      expect(linearPatternError(pattern)).toMatch(reason);
    }
    expect(linearPatternError('^[a-z]+$')).toBeUndefined();
  });

  it('keeps only provably linear shapes on RegExp (anchored, single-character atoms, no loop overlapping what follows)', () => {
    const engine = (pattern: string) =>
      linearPattern(pattern, 'u') instanceof RegExp ? 'RegExp' : 'RE2';
    for (const pattern of [
      '^[A-Z]{3}$',
      '^[A-Z0-9-]{3,32}$',
      '^\\d+-\\d+$',
      '^[^@]+@[^@]+$',
      '^\\w+\\s*$',
      '^a?b',
      '^[a-z]{2}[0-9]{2,4}',
    ])
      expect([pattern, engine(pattern)]).toEqual([pattern, 'RegExp']);
    for (const pattern of [
      '^a*a*a*a*a*b$', // a loop followed by what it matches itself
      '(.*a){3}x', // a group
      '\\s*\\s*$', // not anchored: every start position is tried
      '\\d+\\d+\\d+x',
      '^.*x$', // . includes x
      '^[a-z]+[a-z0-9]*$',
      '^\\w+\\d?$',
      '^a*?b$', // lazy
      '^[a-z0-9]+(-[a-z0-9]+)*$', // a group
      '^a|b$', // alternation
      '^\\p{L}+$', // a property's characters are not known here
      '^a+\\bb', // an assertion
    ])
      expect([pattern, engine(pattern)]).toEqual([pattern, 'RE2']);
  });

  it('drops capturing groups (test reads none) and names every literal outside [A-Za-z0-9_ ]', () => {
    expect(toRe2Syntax('^(a)-(?<n>b)$')).toEqual({
      source: '^(?:a)\\x{2D}(?:b)$',
      lookbehind: false,
    });
  });
});
