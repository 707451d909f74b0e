/** `enum` values as a set (deep equality); `const` may only stay the same. */
import { canonicalJson } from '../canonical-json.js';
import type { ShapeRule } from './shape-rule.js';

function valueSet(values: unknown): Set<string> {
  return new Set((Array.isArray(values) ? values : []).map(canonicalJson));
}

export const enumRule: ShapeRule = {
  name: 'enum',
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
  name: 'const',
  kinds: ['const'],
  compare(ctx, original, update) {
    if (canonicalJson(original.keywords['const']) !== canonicalJson(update.keywords['const']))
      ctx.add('ENUM_ARRAY_CHANGED', 'const');
  },
};
