/** `uniqueItems: true` forbids duplicates: adding it tightens, removing it loosens. */
import type { ShapeRule } from './shape-rule.js';

export const uniqueItemsRule: ShapeRule = {
  id: 'unique-items',
  purpose: '`uniqueItems` added (stricter) or removed (looser).',
  emits: ['UNIQUE_ITEMS_ADDED', 'UNIQUE_ITEMS_REMOVED'],
  kinds: ['array'],
  compare(ctx, original, update) {
    const before = original.keywords['uniqueItems'] === true;
    const after = update.keywords['uniqueItems'] === true;
    if (before && !after) ctx.add('UNIQUE_ITEMS_REMOVED', 'uniqueItems');
    else if (!before && after) ctx.add('UNIQUE_ITEMS_ADDED', 'uniqueItems');
  },
};
