/** `pattern`: any change but removal may reject strings that were valid. */
import type { ShapeRule } from './shape-rule.js';

export const stringPatternRule: ShapeRule = {
  id: 'string-pattern',
  purpose:
    'A string `pattern` added, removed or rewritten (patterns are not compared by meaning, so any rewrite may narrow).',
  emits: ['PATTERN_ADDED', 'PATTERN_REMOVED', 'PATTERN_CHANGED'],
  kinds: ['string'],
  compare(ctx, original, update) {
    const before = original.keywords['pattern'];
    const after = update.keywords['pattern'];
    if (before === after) return;
    if (before === undefined) ctx.add('PATTERN_ADDED', 'pattern');
    else if (after === undefined) ctx.add('PATTERN_REMOVED', 'pattern');
    else ctx.add('PATTERN_CHANGED', 'pattern');
  },
};
