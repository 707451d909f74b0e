/**
 * `additionalProperties` / `additionalItems` (2020-12: `items` after `prefixItems`) and
 * `unevaluatedProperties` / `unevaluatedItems`: whether extras are allowed, and under which schema.
 */
import { isObject } from '../../common/json-value.js';
import type { CompareSchemas } from './shape-rule.js';
import type { DiffContext } from '../diff-context.js';
import { acceptsEverything, childOf, type Shape } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';
import { arrayRestKeyword, openEnd } from './content-model.js';
import type { ShapeRule } from './shape-rule.js';

type Stem =
  'ADDITIONAL_PROPERTIES' | 'ADDITIONAL_ITEMS' | 'UNEVALUATED_PROPERTIES' | 'UNEVALUATED_ITEMS';
type Change = 'ADDED' | 'REMOVED' | 'NARROWED' | 'EXTENDED';

/** The difference type of each keyword family and change, spelled out so the compiler checks it. */
const TYPES = {
  ADDITIONAL_PROPERTIES: {
    ADDED: 'ADDITIONAL_PROPERTIES_ADDED',
    REMOVED: 'ADDITIONAL_PROPERTIES_REMOVED',
    NARROWED: 'ADDITIONAL_PROPERTIES_NARROWED',
    EXTENDED: 'ADDITIONAL_PROPERTIES_EXTENDED',
  },
  ADDITIONAL_ITEMS: {
    ADDED: 'ADDITIONAL_ITEMS_ADDED',
    REMOVED: 'ADDITIONAL_ITEMS_REMOVED',
    NARROWED: 'ADDITIONAL_ITEMS_NARROWED',
    EXTENDED: 'ADDITIONAL_ITEMS_EXTENDED',
  },
  UNEVALUATED_PROPERTIES: {
    ADDED: 'UNEVALUATED_PROPERTIES_ADDED',
    REMOVED: 'UNEVALUATED_PROPERTIES_REMOVED',
    NARROWED: 'UNEVALUATED_PROPERTIES_NARROWED',
    EXTENDED: 'UNEVALUATED_PROPERTIES_EXTENDED',
  },
  UNEVALUATED_ITEMS: {
    ADDED: 'UNEVALUATED_ITEMS_ADDED',
    REMOVED: 'UNEVALUATED_ITEMS_REMOVED',
    NARROWED: 'UNEVALUATED_ITEMS_NARROWED',
    EXTENDED: 'UNEVALUATED_ITEMS_EXTENDED',
  },
} as const satisfies Record<Stem, Record<Change, DifferenceType>>;

const type = (stem: Stem, change: Change): DifferenceType => TYPES[stem][change];

/** Every type of a family, for the rules' metadata. */
const typesOf = (stem: Stem): readonly DifferenceType[] => Object.values(TYPES[stem]);

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
  const before = extrasSchema(original, keywords[0]);
  const after = extrasSchema(update, keywords[1]);
  ctx.enter([path], () => {
    if (before.permits !== after.permits) ctx.add(type(stem, after.permits ? 'ADDED' : 'REMOVED'));
    else if (before.schema === undefined && after.schema !== undefined) {
      // By meaning, no schema is `true`: only a reader schema that rejects something narrows.
      if (ctx.reading === 'meaning')
        compareSchemas(ctx, childOf(original, true), childOf(update, after.schema));
      else ctx.add(type(stem, 'NARROWED'));
    } else if (before.schema !== undefined && after.schema === undefined)
      ctx.add(type(stem, 'EXTENDED'));
    else if (before.schema !== undefined)
      compareSchemas(ctx, childOf(original, before.schema), childOf(update, after.schema));
  });
}

/**
 * The schema extras must match. Confluent's loader keeps an object that accepts everything
 * (`additionalProperties: {}`) as a schema, unlike `true`: so `{}` added counts as narrowed and
 * `{}` → `{"type": "integer"}` as a type change.
 */
function extrasSchema(shape: Shape, keyword: string): { permits: boolean; schema: unknown } {
  const end = openEnd(shape, keyword);
  const written = shape.keywords[keyword];
  if (shape.at.doc.reading === 'confluent' && end.schema === undefined && isObject(written))
    return { permits: end.permits, schema: written };
  return end;
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
    const beforeOpen = before === undefined || acceptsEverything(before, original.at.doc);
    const afterOpen = after === undefined || acceptsEverything(after, update.at.doc);
    if (before === false && after !== false) ctx.add(type(stem, 'ADDED'));
    else if (before !== false && after === false) ctx.add(type(stem, 'REMOVED'));
    else if (beforeOpen && !afterOpen) ctx.add(type(stem, 'NARROWED'));
    else if (!beforeOpen && afterOpen) ctx.add(type(stem, 'EXTENDED'));
    else if (!beforeOpen && !afterOpen && before !== false)
      compareSchemas(ctx, childOf(original, before), childOf(update, after));
  });
}

export const additionalPropertiesRule: ShapeRule = {
  id: 'additional-properties',
  purpose:
    'Whether an object accepts extra properties (`additionalProperties`, `unevaluatedProperties`), and under which schema.',
  emits: [...typesOf('ADDITIONAL_PROPERTIES'), ...typesOf('UNEVALUATED_PROPERTIES')],
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
  id: 'additional-items',
  purpose:
    'Whether an array accepts items past its tuple (`additionalItems`, 2020-12 `items` after `prefixItems`, `unevaluatedItems`), and under which schema.',
  emits: [...typesOf('ADDITIONAL_ITEMS'), ...typesOf('UNEVALUATED_ITEMS')],
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
