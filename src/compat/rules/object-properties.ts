/**
 * Properties added or removed, judged by the content model: a property may disappear from the
 * reader only if the reader still accepts it as an extra (open, or covered by a partially open
 * model), and may appear in the reader only if the writer could not have sent something else
 * under that name (closed model, or covered by the writer's partially open model).
 */
import type { CompareSchemas } from './shape-rule.js';
import type { DiffContext } from '../diff-context.js';
import { isObject } from '../../common/json-value.js';
import { acceptsEverything, childOf, shapeOf, type Shape } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';
import { isOpenObject, objectExtraSchema } from './content-model.js';
import type { ShapeRule } from './shape-rule.js';

export function propertiesOf(shape: Shape): Readonly<Record<string, unknown>> {
  const properties = shape.keywords['properties'];
  return isObject(properties) ? properties : {};
}

export function requiredOf(shape: Shape): ReadonlySet<string> {
  const required = shape.keywords['required'];
  return new Set(
    Array.isArray(required) ? required.filter((key): key is string => typeof key === 'string') : [],
  );
}

function hasOwn(record: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(record, key);
}

/** Compares `original` with the extra schema of a partially open model, reporting coverage. */
export function againstPartial(
  ctx: DiffContext,
  compare: (trial: DiffContext) => void,
  covered: DifferenceType,
  notCovered: DifferenceType,
): void {
  const trial = ctx.sub();
  compare(trial);
  ctx.addAll(trial.differences);
  ctx.add(trial.isCompatible() ? covered : notCovered);
}

function removed(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  key: string,
  compareSchemas: CompareSchemas,
): void {
  const originalSchema = propertiesOf(original)[key];
  if (isOpenObject(update)) {
    ctx.add('PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL');
    return;
  }
  const extra = objectExtraSchema(update, key);
  if (extra !== undefined) {
    againstPartial(
      ctx,
      (trial) => compareSchemas(trial, childOf(original, originalSchema), childOf(update, extra)),
      'PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
      'PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    );
  } else if (originalSchema === false) {
    ctx.add('PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL');
  } else {
    ctx.add('PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL');
  }
}

function added(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  key: string,
  compareSchemas: CompareSchemas,
): void {
  const updateSchema = propertiesOf(update)[key];
  const required = requiredOf(update).has(key);
  const hasDefault = () => shapeOf(childOf(update, updateSchema)).meta.hasDefault;
  if (isOpenObject(original)) {
    // Confluent forgives any property with an empty schema; by meaning a required one still
    // rejects data without it.
    if (
      acceptsEverything(updateSchema, update.at.doc) &&
      (ctx.reading === 'confluent' || !required)
    )
      ctx.add('PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL');
    else if (!required) ctx.add('OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL');
    else
      ctx.add(
        hasDefault()
          ? 'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL'
          : 'REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
      );
    return;
  }
  const extra = objectExtraSchema(original, key);
  if (extra !== undefined) {
    againstPartial(
      ctx,
      (trial) => compareSchemas(trial, childOf(original, extra), childOf(update, updateSchema)),
      'PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
      'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    );
  }
  if (!required) ctx.add('OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL');
  else
    ctx.add(
      hasDefault()
        ? 'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL'
        : 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    );
}

export const objectPropertiesRule: ShapeRule = {
  id: 'object-properties',
  purpose:
    'Properties added or removed, judged by the content model (open, closed, partially open) and by whether they are required or have a default.',
  emits: [
    'PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    'PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL',
    'OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    'OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL',
    'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL',
    'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
  ],
  kinds: ['object'],
  compare(ctx, original, update, compareSchemas) {
    const before = propertiesOf(original);
    const after = propertiesOf(update);
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      ctx.enter(['properties', key], () => {
        if (!hasOwn(after, key)) removed(ctx, original, update, key, compareSchemas);
        else if (!hasOwn(before, key)) added(ctx, original, update, key, compareSchemas);
        else compareSchemas(ctx, childOf(original, before[key]), childOf(update, after[key]));
      });
    }
  },
};

/** A property both declare that became required (or stopped being required). */
export const objectRequiredRule: ShapeRule = {
  id: 'object-required',
  purpose:
    'A property both versions declare became required (breaks old data unless it has a default) or optional.',
  emits: [
    'REQUIRED_ATTRIBUTE_ADDED',
    'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED',
    'REQUIRED_ATTRIBUTE_REMOVED',
  ],
  kinds: ['object'],
  compare(ctx, original, update) {
    const before = requiredOf(original);
    const after = requiredOf(update);
    const afterProperties = propertiesOf(update);
    for (const key of Object.keys(propertiesOf(original)).sort()) {
      if (!hasOwn(afterProperties, key)) continue;
      if (before.has(key) && !after.has(key))
        ctx.add('REQUIRED_ATTRIBUTE_REMOVED', 'required', key);
      else if (!before.has(key) && after.has(key)) {
        const hasDefault = shapeOf(childOf(update, afterProperties[key])).meta.hasDefault;
        ctx.add(
          hasDefault ? 'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED' : 'REQUIRED_ATTRIBUTE_ADDED',
          'required',
          key,
        );
      }
    }
  },
};

/** Schemas of `patternProperties` both sides declare must stay compatible. */
export const patternPropertiesRule: ShapeRule = {
  id: 'pattern-properties',
  purpose:
    'Schemas of `patternProperties` both versions declare must stay compatible (by meaning only: Confluent does not compare them).',
  emits: [],
  kinds: ['object'],
  compare(ctx, original, update, compareSchemas) {
    // Confluent's checker never compares pattern property schemas; their meaning still binds readers.
    if (ctx.reading === 'confluent') return;
    const before = original.keywords['patternProperties'];
    const after = update.keywords['patternProperties'];
    if (!isObject(before) || !isObject(after)) return;
    for (const pattern of Object.keys(before).sort()) {
      if (!hasOwn(after, pattern)) continue;
      ctx.enter(['patternProperties', pattern], () =>
        compareSchemas(ctx, childOf(original, before[pattern]), childOf(update, after[pattern])),
      );
    }
  },
};
