/** `$id`, `title`, `description`, `default`: reported, always compatible. */
import { canonicalJson } from '../../common/canonical-json.js';
import type { ShapeRule } from './shape-rule.js';

export const metadataRule: ShapeRule = {
  id: 'metadata',
  purpose:
    '`$id`, `title`, `description` and `default` changed: reported for completeness, never a break.',
  emits: ['ID_CHANGED', 'TITLE_CHANGED', 'DESCRIPTION_CHANGED', 'DEFAULT_CHANGED'],
  kinds: 'all',
  compare(ctx, original, update) {
    const a = original.meta;
    const b = update.meta;
    if (a.id !== b.id) ctx.add('ID_CHANGED');
    if (a.title !== b.title) ctx.add('TITLE_CHANGED');
    if (a.description !== b.description) ctx.add('DESCRIPTION_CHANGED');
    if (
      a.hasDefault !== b.hasDefault ||
      (a.hasDefault && canonicalJson(a.default) !== canonicalJson(b.default))
    )
      ctx.add('DEFAULT_CHANGED');
  },
};
