/** `enum` values as a set (deep equality); `const` may only stay the same. */
import { canonicalJson } from '../../common/canonical-json.js';
import type { ShapeRule } from './shape-rule.js';

function valueSet(values: unknown): Set<string> {
  return new Set((Array.isArray(values) ? values : []).map(canonicalJson));
}

export const enumRule: ShapeRule = {
  id: 'enum',
  purpose: '`enum` values: the reader must keep every value the writer may send.',
  emits: ['ENUM_ARRAY_EXTENDED', 'ENUM_ARRAY_NARROWED', 'ENUM_ARRAY_CHANGED'],
  kinds: ['enum'],
  compare(ctx, original, update) {
    const before = valueSet(original.keywords['enum']);
    const after = valueSet(update.keywords['enum']);
    const lost = [...before].some((value) => !after.has(value));
    const gained = [...after].some((value) => !before.has(value));
    if (!lost && !gained) return;
    if (!lost) ctx.add('ENUM_ARRAY_EXTENDED', 'enum');
    else if (!gained) ctx.add('ENUM_ARRAY_NARROWED', 'enum');
    else ctx.add('ENUM_ARRAY_CHANGED', 'enum');
  },
};

export const constRule: ShapeRule = {
  id: 'const',
  purpose:
    '`const`: any change of the single allowed value breaks readers (reported as an enum change, as Confluent does).',
  emits: ['ENUM_ARRAY_CHANGED'],
  kinds: ['const'],
  compare(ctx, original, update) {
    if (canonicalJson(original.keywords['const']) !== canonicalJson(update.keywords['const']))
      ctx.add('ENUM_ARRAY_CHANGED', 'const');
  },
};
