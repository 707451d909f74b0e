/** `not`: the negated schemas compare the other way round (a looser `not` rejects more). */
import { childOf } from '../schema-shape.js';
import type { ShapeRule } from './shape-rule.js';

export const notRule: ShapeRule = {
  id: 'not',
  purpose:
    '`not`: the reader may exclude only what the writer excluded (its negated schema may only shrink).',
  emits: ['NOT_TYPE_NARROWED', 'NOT_TYPE_EXTENDED'],
  kinds: ['not'],
  compare(ctx, original, update, compareSchemas) {
    ctx.enter(['not'], () => {
      const trial = ctx.sub();
      compareSchemas(
        trial,
        childOf(update, update.keywords['not']),
        childOf(original, original.keywords['not']),
      );
      ctx.add(trial.isCompatible() ? 'NOT_TYPE_NARROWED' : 'NOT_TYPE_EXTENDED');
    });
  },
};
