import { describe, expect, it } from 'vitest';
import { catastrophicPatternReason } from '../../src/catalog/catastrophic-pattern.js';

/** Time one match of `pattern` against `input` (only for patterns the analysis accepts and small inputs). */
function matches(pattern: string, input: string): boolean {
  return new RegExp(pattern, 'u').test(input);
}

describe('catastrophicPatternReason', () => {
  it.each([
    '^(a+)+$',
    '(a*)*b',
    '^(\\w+\\s?)*$',
    '(?:x*y?)+z',
    '^([a-zA-Z0-9]+)*$',
    '(a|a)*$',
    '^(a|ab)*c',
    '(\\w|\\d)+$',
    '^(.*a){11}$',
    '((a+))+',
    '(?<n>a+)+',
    '^(x+x+)+y$',
    '^(a+){2,}$',
    '^([^,]+,?)+$',
    '^(\\s*[a-z]+\\s*)*$',
  ])('refuses %s', (pattern) => {
    expect(catastrophicPatternReason(pattern)).toMatch(/exponential time/);
  });

  it.each([
    '^[A-Z]{3}$',
    '^[a-z0-9]+(-[a-z0-9]+)*$',
    '^([a-z0-9]+-)*[a-z0-9]+$',
    '^(\\d{1,3}\\.){3}\\d{1,3}$',
    '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
    '^SKU-[0-9]{3,8}$',
    '^(ab|cd)*$',
    '^(?:[01]\\d|2[0-3]):[0-5]\\d$',
    '^[A-Za-z][A-Za-z0-9_-]*(\\.[A-Za-z][A-Za-z0-9_-]*)*$',
    '^(a{2})+$',
    '^[^\'"`]*$',
    'x*/x*/;process.exit(7);/*',
    '^\\p{L}+$',
    '',
  ])('accepts %s', (pattern) => {
    expect(catastrophicPatternReason(pattern)).toBeUndefined();
    expect(typeof matches(pattern, 'a'.repeat(40) + '!')).toBe('boolean');
  });
});
