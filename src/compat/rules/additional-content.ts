/**
 * `additionalProperties` / `additionalItems` (2020-12: `items` after `prefixItems`) and
 * `unevaluatedProperties` / `unevaluatedItems`: whether extras are allowed, and under which schema.
 */
import type { CompareSchemas } from '../compare-schemas.js';
import type { DiffContext } from '../diff-context.js';
import { acceptsEverything, childOf, type Shape } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';
import { arrayRestKeyword, openEnd } from './content-model.js';
import type { ShapeRule } from './shape-rule.js';

type Stem =
  'ADDITIONAL_PROPERTIES' | 'ADDITIONAL_ITEMS' | 'UNEVALUATED_PROPERTIES' | 'UNEVALUATED_ITEMS';
const type = (stem: Stem, change: 'ADDED' | 'REMOVED' | 'NARROWED' | 'EXTENDED') =>
  `${stem}_${change}` as DifferenceType;

/** `path` is Confluent's name for the keyword (`additionalItems` also for 2020-12's rest `items`). */
function compareAdditional(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  keywords: [string, string],
  path: string,
  stem: Stem,
  compareSchemas: CompareSchemas,
): void {
  const before = openEnd(original, keywords[0]);
  const after = openEnd(update, keywords[1]);
  ctx.enter([path], () => {
    if (before.permits !== after.permits) ctx.add(type(stem, after.permits ? 'ADDED' : 'REMOVED'));
    else if (before.schema === undefined && after.schema !== undefined)
      ctx.add(type(stem, 'NARROWED'));
    else if (before.schema !== undefined && after.schema === undefined)
      ctx.add(type(stem, 'EXTENDED'));
    else if (before.schema !== undefined)
      compareSchemas(ctx, childOf(original, before.schema), childOf(update, after.schema));
  });
}

function compareUnevaluated(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  keyword: string,
  stem: Stem,
  compareSchemas: CompareSchemas,
): void {
  const before = original.keywords[keyword];
  const after = update.keywords[keyword];
  if (before === undefined && after === undefined) return;
  ctx.enter([keyword], () => {
    const beforeOpen = before === undefined || acceptsEverything(before, original.at.doc.dialect);
    const afterOpen = after === undefined || acceptsEverything(after, update.at.doc.dialect);
    if (before === false && after !== false) ctx.add(type(stem, 'ADDED'));
    else if (before !== false && after === false) ctx.add(type(stem, 'REMOVED'));
    else if (beforeOpen && !afterOpen) ctx.add(type(stem, 'NARROWED'));
    else if (!beforeOpen && afterOpen) ctx.add(type(stem, 'EXTENDED'));
    else if (!beforeOpen && !afterOpen && before !== false)
      compareSchemas(ctx, childOf(original, before), childOf(update, after));
  });
}

export const additionalPropertiesRule: ShapeRule = {
  name: 'additional-properties',
  kinds: ['object'],
  compare(ctx, original, update, compareSchemas) {
    compareAdditional(
      ctx,
      original,
      update,
      ['additionalProperties', 'additionalProperties'],
      'additionalProperties',
      'ADDITIONAL_PROPERTIES',
      compareSchemas,
    );
    compareUnevaluated(
      ctx,
      original,
      update,
      'unevaluatedProperties',
      'UNEVALUATED_PROPERTIES',
      compareSchemas,
    );
  },
};

export const additionalItemsRule: ShapeRule = {
  name: 'additional-items',
  kinds: ['array'],
  compare(ctx, original, update, compareSchemas) {
    compareAdditional(
      ctx,
      original,
      update,
      [arrayRestKeyword(original), arrayRestKeyword(update)],
      'additionalItems',
      'ADDITIONAL_ITEMS',
      compareSchemas,
    );
    compareUnevaluated(
      ctx,
      original,
      update,
      'unevaluatedItems',
      'UNEVALUATED_ITEMS',
      compareSchemas,
    );
  },
};
