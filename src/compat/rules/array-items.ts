/**
 * Array items: one schema for every item (`items` as a schema, when there is no tuple), and
 * tuples (`prefixItems` in 2020-12, `items` as an array in draft-07) compared position by
 * position; positions added or removed are judged by the content model like properties.
 * Reported paths use Confluent's draft-07 names (`#/items/1` for `prefixItems[1]`).
 */
import type { CompareSchemas } from './shape-rule.js';
import type { DiffContext } from '../diff-context.js';
import { acceptsEverything, childOf, type Shape } from '../schema-shape.js';
import { arrayExtraSchema, isOpenArray } from './content-model.js';
import { againstPartial } from './object-properties.js';
import type { ShapeRule } from './shape-rule.js';

interface Tuple {
  readonly items: readonly unknown[];
}

function tupleOf(shape: Shape): Tuple {
  const prefix = shape.keywords['prefixItems'];
  if (Array.isArray(prefix) && shape.at.doc.dialect === '2020-12') return { items: prefix };
  const items = shape.keywords['items'];
  return { items: Array.isArray(items) ? items : [] };
}

/** The schema every item must match, if any (`true`/`{}` count as none). */
function allItemsOf(shape: Shape): unknown {
  const items = shape.keywords['items'];
  if (shape.at.doc.dialect !== '2020-12') {
    // Draft-07: `items: false` allows only the empty array; `true`/`{}` constrain nothing, but
    // Confluent's loader keeps them as an item schema (so adding one counts as SCHEMA_ADDED).
    if (items === undefined || Array.isArray(items)) return undefined;
    if (acceptsEverything(items, shape.at.doc) && shape.at.doc.reading !== 'confluent')
      return undefined;
    return items;
  }
  if (Array.isArray(shape.keywords['prefixItems'])) return undefined;
  // A boolean `items` is the rest of an empty tuple (see arrayRestKeyword).
  if (
    items === undefined ||
    typeof items === 'boolean' ||
    Array.isArray(items) ||
    acceptsEverything(items, shape.at.doc)
  )
    return undefined;
  return items;
}

export const arrayItemsRule: ShapeRule = {
  id: 'array-items',
  purpose:
    'The schema every item of an array must match (`items` as one schema), compared as a subschema.',
  emits: [],
  kinds: ['array'],
  compare(ctx, original, update, compareSchemas) {
    const before = allItemsOf(original);
    const after = allItemsOf(update);
    ctx.enter(['items'], () =>
      compareSchemas(
        ctx,
        before === undefined ? undefined : childOf(original, before),
        after === undefined ? undefined : childOf(update, after),
      ),
    );
  },
};

function removedItem(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  schema: unknown,
  compareSchemas: CompareSchemas,
): void {
  if (isOpenArray(update)) {
    ctx.add('ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL');
    return;
  }
  const extra = arrayExtraSchema(update);
  if (extra !== undefined) {
    againstPartial(
      ctx,
      (trial) => compareSchemas(trial, childOf(original, schema), childOf(update, extra)),
      'ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
      'ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    );
  } else {
    ctx.add(
      schema === false
        ? 'ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL'
        : 'ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    );
  }
}

function addedItem(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  schema: unknown,
  compareSchemas: CompareSchemas,
): void {
  if (isOpenArray(original)) {
    ctx.add(
      acceptsEverything(schema, update.at.doc)
        ? 'ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL'
        : 'ITEM_ADDED_TO_OPEN_CONTENT_MODEL',
    );
    return;
  }
  const extra = arrayExtraSchema(original);
  if (extra !== undefined) {
    againstPartial(
      ctx,
      (trial) => compareSchemas(trial, childOf(original, extra), childOf(update, schema)),
      'ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
      'ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    );
  } else {
    ctx.add('ITEM_ADDED_TO_CLOSED_CONTENT_MODEL');
  }
}

export const arrayTupleRule: ShapeRule = {
  id: 'array-tuple',
  purpose:
    "Tuple positions (`items` arrays, `prefixItems`) added or removed, judged by the array's content model.",
  emits: [
    'ITEM_ADDED_TO_OPEN_CONTENT_MODEL',
    'ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL',
    'ITEM_ADDED_TO_CLOSED_CONTENT_MODEL',
    'ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL',
    'ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
  ],
  kinds: ['array'],
  compare(ctx, original, update, compareSchemas) {
    const before = tupleOf(original);
    const after = tupleOf(update);
    const count = Math.max(before.items.length, after.items.length);
    for (let index = 0; index < count; index++) {
      // Paths name positions `items/N` in both dialects, as Confluent reports them.
      ctx.enter(['items', index], () => {
        if (index >= after.items.length)
          removedItem(ctx, original, update, before.items[index], compareSchemas);
        else if (index >= before.items.length)
          addedItem(ctx, original, update, after.items[index], compareSchemas);
        else
          compareSchemas(
            ctx,
            childOf(original, before.items[index]),
            childOf(update, after.items[index]),
          );
      });
    }
  },
};
