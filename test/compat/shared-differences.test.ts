/**
 * Differences are shared between pairs, not copied (src/compat/difference-list.ts): a pair met
 * again in every union trial and at every level of a recursion is linked, and only the report
 * expands the links. Confluent's slowest held-out pair (recursive oneOf unions of twelve kinds)
 * used to copy millions of differences: under policy evgen it stopped at the replay limit. It
 * must get a verdict under every policy, with a short, exact report.
 */
import { describe, expect, it } from 'vitest';
import { checkReadable, type CompatibilityPolicy } from 'evgen';
import { DifferenceList, type Difference } from '../../src/compat/difference-list.js';
import { STRICT_COMPATIBLE } from '../../src/compat/policy.js';
import { recursiveTrade, TRADE_KINDS } from '../support/recursive-trade.js';

const changes = (writer: unknown, reader: unknown, policy: CompatibilityPolicy) => {
  const result = checkReadable(
    writer as Parameters<typeof checkReadable>[0],
    reader as Parameters<typeof checkReadable>[1],
    policy,
  );
  return {
    compatible: result.compatible,
    changes: result.changes.map((change) => `${change.type} ${change.path}`),
  };
};

describe("Confluent's recursive oneOf pair (twelve kinds, one id string → number)", () => {
  const original = recursiveTrade('string');
  const update = recursiveTrade('number');

  it.each(['confluent', 'confluent-lenient'] as const)(
    '%s: incompatible both ways, one difference at the root union',
    (policy) => {
      for (const [writer, reader] of [
        [original, update],
        [update, original],
      ]) {
        expect(changes(writer, reader, policy)).toEqual({
          compatible: false,
          changes: ['COMBINED_TYPE_SUBSCHEMAS_CHANGED #/properties/product'],
        });
      }
    },
  );

  it('evgen: backward compatible (the old root union accepts no object: eleven kinds are alike, so a product matches several), forward incompatible', () => {
    const backward = changes(original, update, 'evgen');
    expect(backward.compatible).toBe(true);
    // Each writer kind read by the whole reader union: two differences per kind, at the root union.
    expect([...new Set(backward.changes)]).toEqual([
      'SUM_TYPE_EXTENDED #/properties/product',
      'ADDITIONAL_PROPERTIES_ADDED #/properties/product/additionalProperties',
    ]);
    expect(backward.changes).toHaveLength(2 * TRADE_KINDS.length);
    // `{"product": {"id": 5}}` matches only the new Asset kind; no old kind takes a number id.
    expect(changes(update, original, 'evgen')).toEqual({
      compatible: false,
      changes: [
        'COMBINED_TYPE_EXTENDED #/properties/product',
        'COMBINED_TYPE_SUBSCHEMAS_CHANGED #/properties/product',
      ],
    });
  });
});

describe('DifferenceList', () => {
  const difference = (type: Difference['type'], path: string, extra: object = {}): Difference => ({
    type,
    path,
    ...extra,
  });
  const list = (...differences: Difference[]) => {
    const made = new DifferenceList(STRICT_COMPATIBLE);
    for (const item of differences) made.push(item);
    return made;
  };
  const expandAll = (from: DifferenceList, directOnly = false) =>
    from
      .expand({
        judgedOnly: false,
        directOnly,
        limit: 1000,
        onLimit: () => {
          throw new Error('limit');
        },
      })
      .map((item) => `${item.type} ${item.path}${item.viaCycle === true ? ' (cycle)' : ''}`);

  it('links a list under a prefix instead of copying it: sizes double per level, paths expand only on demand', () => {
    let level = list(difference('TYPE_CHANGED', '#/x'));
    const levels = [level];
    for (let depth = 1; depth <= 60; depth++) {
      const next = new DifferenceList(STRICT_COMPATIBLE);
      next.link(level, 'a', false);
      next.link(level, 'b~1c', false);
      levels.push((level = next));
    }
    expect(level.size).toBe(2 ** 60);
    expect(level.compatible).toBe(false);
    expect(expandAll(levels[2]!)).toEqual([
      'TYPE_CHANGED #/a/a/x',
      'TYPE_CHANGED #/a/b~1c/x',
      'TYPE_CHANGED #/b~1c/a/x',
      'TYPE_CHANGED #/b~1c/b~1c/x',
    ]);
    expect(() =>
      level.expand({
        judgedOnly: false,
        directOnly: false,
        limit: 100,
        onLimit: () => {
          throw new Error('too many');
        },
      }),
    ).toThrow('too many');
  });

  it('keeps the verdict flags as it grows: repeats where a cycle closes and unjudged changes count apart', () => {
    const incompatible = list(difference('TYPE_CHANGED', '#/'));
    const viaCycle = new DifferenceList(STRICT_COMPATIBLE);
    viaCycle.push(difference('MAX_LENGTH_INCREASED', '#/properties/p/maxLength'));
    viaCycle.link(incompatible, 'properties/next', true);
    expect(viaCycle.compatible).toBe(false);
    expect(viaCycle.judgedCompatible).toBe(false);
    expect(viaCycle.directCompatible).toBe(true);
    expect(expandAll(viaCycle)).toEqual([
      'MAX_LENGTH_INCREASED #/properties/p/maxLength',
      'TYPE_CHANGED #/properties/next (cycle)',
    ]);
    expect(expandAll(viaCycle, true)).toEqual(['MAX_LENGTH_INCREASED #/properties/p/maxLength']);

    const unjudged = list(difference('COMBINED_TYPE_CHANGED', '#/format', { unjudged: 'format' }));
    const outer = new DifferenceList(STRICT_COMPATIBLE);
    outer.link(list(), 'items', false);
    outer.link(unjudged, 'properties/s', false);
    expect(outer.compatible).toBe(false);
    expect(outer.judgedCompatible).toBe(true);
    expect(outer.hasUnjudged).toBe(true);
    expect(outer.firstUnjudged()).toMatchObject({
      unjudged: 'format',
      path: '#/properties/s/format',
    });
  });
});
