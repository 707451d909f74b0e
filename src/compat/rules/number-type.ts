/** `integer` ⊂ `number`: integer → number extends the type, number → integer narrows it. */
import type { ShapeRule } from './shape-rule.js';

export const numberTypeRule: ShapeRule = {
  id: 'number-type',
  purpose:
    '`integer` ↔ `number`: widening to number reads every integer, narrowing to integer does not.',
  emits: ['TYPE_EXTENDED', 'TYPE_NARROWED'],
  kinds: ['number'],
  compare(ctx, original, update) {
    if (original.integer === update.integer) return;
    ctx.add(original.integer === true ? 'TYPE_EXTENDED' : 'TYPE_NARROWED');
  },
};
