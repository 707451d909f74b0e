/**
 * Works around an ajv 8.20 bug in the schemas the validators target compiles: a `contains`
 * subschema applied to several instances in a loop (under `items`, `additionalProperties`, …)
 * accepts an EMPTY array once an earlier instance passed. With `strict: false`, with or without
 * `allErrors`, `{"items": {"contains": {"type": "string"}}}` accepts `[["x"], []]` (while
 * `[["x"], [1]]` is rightly rejected), and `{"additionalProperties": {"contains": …}}` accepts
 * `{"a": ["x"], "b": []}`. A `minItems` beside `contains` makes ajv reject them.
 *
 * So every schema object with `contains` also gets `minItems: max(minItems, minContains)`:
 * `contains` with a `minContains` of n ≥ 1 (1 when absent) needs at least n items anyway, so the
 * meaning is unchanged. `minContains: 0` (2019-09 and 2020-12) lets an empty array pass, so such a
 * schema is left alone; draft-07 has no `minContains` (ajv ignores it there), so the floor is 1.
 *
 * Only for compiling: the compatibility checker judges the schemas as written.
 */
import type { JsonSchema } from '../../catalog/model.js';
import type { Dialect } from '../../schema/views.js';
import { mapSchema } from '../../schema/walk.js';

/** A copy of `schema` in which every `contains` carries its implied `minItems`; input untouched. */
export function withContainsItemFloor(schema: JsonSchema, dialect: Dialect): JsonSchema {
  return mapSchema(schema, (node) => {
    if (!('contains' in node)) return node;
    const minContains = dialect === 'draft-07' ? undefined : node['minContains'];
    const floor = typeof minContains === 'number' ? minContains : 1;
    if (!(floor > 0)) return node;
    const minItems = node['minItems'] ?? 0;
    // A malformed `minItems` stays as written, for ajv to report.
    if (typeof minItems !== 'number' || minItems >= floor) return node;
    return { ...node, minItems: floor };
  }) as JsonSchema;
}
