import { describe, expect, it } from 'vitest';
import { unfaithfulNumbers } from '../../src/runtime/unfaithful-numbers.js';

describe('unfaithfulNumbers', () => {
  it('finds nothing in a payload of safe numbers, strings, nulls and nesting', () => {
    expect(
      unfaithfulNumbers({
        a: 1,
        b: -Number.MAX_SAFE_INTEGER,
        c: [0.5, { d: Number.MAX_SAFE_INTEGER, e: null, f: 'x' }],
      }),
    ).toEqual([]);
  });

  it('names every unfaithful number by its pointer, however deep, escaping keys', () => {
    const found = unfaithfulNumbers(
      { ok: 1, 'a/b': [1, { '~n': Number.NaN }], deep: { x: [2, 2 ** 60] }, inf: -Infinity },
      '/payload',
    );
    expect(found.map((violation) => violation.pointer)).toEqual([
      '/payload/a~1b/1/~0n',
      '/payload/deep/x/1',
      '/payload/inf',
    ]);
    expect(found[1]!.message).toContain('beyond ±(2^53 − 1)');
    expect(found[0]!.message).toContain('NaN');
  });

  it('finds a number placed last in a long array (the check walks everything)', () => {
    const items: unknown[] = Array.from({ length: 1_000 }, (_, i) => ({ i }));
    items.push({ i: Number.POSITIVE_INFINITY });
    expect(unfaithfulNumbers(items).map((violation) => violation.pointer)).toEqual(['/1000/i']);
  });
});
