/**
 * Property dependencies (draft-07 `dependencies` with arrays, 2020-12 `dependentRequired`) and
 * schema dependencies (`dependencies` with schemas, `dependentSchemas`). Paths use Confluent's
 * draft-07 name in both dialects: `#/dependencies/<property>`.
 */
import { isObject } from '../../common/json-value.js';
import { childOf, type Shape } from '../schema-shape.js';
import type { ShapeRule } from './shape-rule.js';

interface Dependency<T> {
  readonly value: T;
}

/** 2019-09/2020-12 no longer have `dependencies` (see schema-document.ts); draft-07 only has it. */
function dependencyKeywords(shape: Shape, newer: string): readonly string[] {
  return shape.at.doc.dialect === '2020-12' ? [newer] : ['dependencies'];
}

function propertyDependencies(shape: Shape): Map<string, Dependency<ReadonlySet<string>>> {
  const result = new Map<string, Dependency<ReadonlySet<string>>>();
  for (const name of dependencyKeywords(shape, 'dependentRequired')) {
    const map = shape.keywords[name];
    if (!isObject(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      if (Array.isArray(value))
        result.set(key, {
          value: new Set(value.filter((item): item is string => typeof item === 'string')),
        });
    }
  }
  return result;
}

function schemaDependencies(shape: Shape): Map<string, Dependency<unknown>> {
  const result = new Map<string, Dependency<unknown>>();
  for (const name of dependencyKeywords(shape, 'dependentSchemas')) {
    const map = shape.keywords[name];
    if (!isObject(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      if (!Array.isArray(value)) result.set(key, { value });
    }
  }
  return result;
}

/** Confluent's name for both kinds, in both dialects. */
const keyword = 'dependencies';

const keysOf = (a: Map<string, unknown>, b: Map<string, unknown>) =>
  [...new Set([...a.keys(), ...b.keys()])].sort();

export const objectDependenciesRule: ShapeRule = {
  id: 'object-dependencies',
  purpose:
    'Property dependencies (`dependencies` arrays, `dependentRequired`) and schema dependencies (`dependencies` schemas, `dependentSchemas`) may only loosen.',
  emits: [
    'DEPENDENCY_ARRAY_ADDED',
    'DEPENDENCY_ARRAY_REMOVED',
    'DEPENDENCY_ARRAY_EXTENDED',
    'DEPENDENCY_ARRAY_NARROWED',
    'DEPENDENCY_ARRAY_CHANGED',
    'DEPENDENCY_SCHEMA_ADDED',
    'DEPENDENCY_SCHEMA_REMOVED',
  ],
  kinds: ['object'],
  compare(ctx, original, update, compareSchemas) {
    const beforeArrays = propertyDependencies(original);
    const afterArrays = propertyDependencies(update);
    for (const key of keysOf(beforeArrays, afterArrays)) {
      const before = beforeArrays.get(key);
      const after = afterArrays.get(key);
      if (after === undefined) ctx.add('DEPENDENCY_ARRAY_REMOVED', keyword, key);
      else if (before === undefined) ctx.add('DEPENDENCY_ARRAY_ADDED', keyword, key);
      else {
        const lost = [...before.value].some((item) => !after.value.has(item));
        const gained = [...after.value].some((item) => !before.value.has(item));
        if (lost && gained) ctx.add('DEPENDENCY_ARRAY_CHANGED', keyword, key);
        else if (gained) ctx.add('DEPENDENCY_ARRAY_EXTENDED', keyword, key);
        else if (lost) ctx.add('DEPENDENCY_ARRAY_NARROWED', keyword, key);
      }
    }
    const beforeSchemas = schemaDependencies(original);
    const afterSchemas = schemaDependencies(update);
    for (const key of keysOf(beforeSchemas, afterSchemas)) {
      const before = beforeSchemas.get(key);
      const after = afterSchemas.get(key);
      if (after === undefined) ctx.add('DEPENDENCY_SCHEMA_REMOVED', keyword, key);
      else if (before === undefined) ctx.add('DEPENDENCY_SCHEMA_ADDED', keyword, key);
      else
        ctx.enter([keyword, key], () =>
          compareSchemas(ctx, childOf(original, before.value), childOf(update, after.value)),
        );
    }
  },
};
