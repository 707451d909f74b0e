/** `uniqueItems: true` forbids duplicates: adding it tightens, removing it loosens. */
import type { ShapeRule } from './shape-rule.js';

export const uniqueItemsRule: ShapeRule = {
  name: 'unique-items',
  kinds: ['array'],
  compare(ctx, original, update) {
    const before = original.keywords['uniqueItems'] === true;
    const after = update.keywords['uniqueItems'] === true;
    if (before && !after) ctx.add('UNIQUE_ITEMS_REMOVED', 'uniqueItems');
    else if (!before && after) ctx.add('UNIQUE_ITEMS_ADDED', 'uniqueItems');
  },
};
