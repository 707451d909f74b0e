/** `integer` ⊂ `number`: integer → number extends the type, number → integer narrows it. */
import type { ShapeRule } from './shape-rule.js';

export const numberTypeRule: ShapeRule = {
  name: 'number-type',
  kinds: ['number'],
  compare(ctx, original, update) {
    if (original.integer === update.integer) return;
    ctx.add(original.integer === true ? 'TYPE_EXTENDED' : 'TYPE_NARROWED');
  },
};
