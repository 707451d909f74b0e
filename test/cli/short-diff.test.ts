import { describe, expect, it } from 'vitest';
import { shortDiff } from '../../src/cli/short-diff.js';

const lines = (count: number, at = 1) =>
  Array.from({ length: count }, (_, index) => `line ${index + at}`);

describe('shortDiff (evgen build --check)', () => {
  it('shows each changed place as its own hunk with a line of context, not one block from the first to the last change', () => {
    const before = ['// header v1', ...lines(40), ''].join('\n');
    const after = ['// header v2', ...lines(20), 'inserted', ...lines(20, 21), ''].join('\n');
    const diff = shortDiff(before, after, 'generated/a.ts');
    expect(diff).toBe(
      [
        '--- generated/a.ts (on disk)',
        '+++ generated/a.ts (generated)',
        '@@ -1,2 +1,2 @@',
        '-// header v1',
        '+// header v2',
        ' line 1',
        '@@ -21,2 +21,3 @@',
        ' line 20',
        '+inserted',
        ' line 21',
      ].join('\n'),
    );
  });

  it('caps the changed lines it prints and says how many more there are', () => {
    const before = [...lines(30), ''].join('\n');
    const after = [...lines(30).map((line) => line.toUpperCase()), ''].join('\n');
    const diff = shortDiff(before, after, 'x.ts', 6);
    expect(diff.split('\n').filter((line) => /^[-+][^-+]/.test(line))).toHaveLength(6);
    expect(diff).toContain('… 54 more changed line(s)');
  });

  it('still works (one block) for files too large to diff line by line', () => {
    const big = lines(5000);
    const diff = shortDiff(
      ['a', ...big].join('\n'),
      ['b', ...big.slice(0, -1), 'z'].join('\n'),
      'big.js',
    );
    expect(diff).toContain('-a');
    expect(diff).toContain('+b');
  });
});
