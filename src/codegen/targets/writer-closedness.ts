/**
 * Splits a strict writer view into "the reader view, and no undeclared properties": when the two
 * views differ only by `additionalProperties: false` on objects the writer reaches through
 * `properties`, `patternProperties`, `additionalProperties`, `items`, `prefixItems`,
 * `additionalItems`, `allOf` and `$ref` alone, the writer accepts exactly what the reader accepts
 * and the closedness schema returned here accepts. That schema keeps only those keywords (the
 * names `additionalProperties: false` is judged against, and the way down to each closed
 * object), so the validators target compiles the writer as the reader's function plus a small
 * closedness check instead of a second full copy of every type, format and bound check.
 *
 * Anything else (an `anyOf`/`oneOf` whose branches the writer closes and the reader turns into
 * `anyOf`, names the writer adds to close a combined draft-07 schema, `unevaluatedProperties`,
 * dynamic references, references it cannot resolve) returns undefined: the writer is then
 * compiled whole, as before. Errors are the same (instance path, keyword, parameters); the
 * reader's come first.
 */
import type { JsonSchema } from '../../catalog/model.js';
import { parseRefPointer, resolveSegments } from '../../common/json-pointer.js';
import { isObject } from '../../common/json-value.js';
import { mapSchema, subschemasOf, walkSchema, type SchemaObject } from '../../schema/walk.js';
import { sortKeysDeep } from '../render/safe-code.js';

/** Keywords whose subschemas apply, together with everything else, to the instance or its parts. */
const CONJUNCTIVE = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'allOf',
]);
/** Keywords that hold reference targets only; they apply nothing themselves. */
const DEFINITIONS = new Set(['definitions', '$defs']);
/** Keywords under which the split is not attempted (evaluation and dynamic scope cross subschemas). */
const UNSUPPORTED = new Set([
  'unevaluatedProperties',
  'unevaluatedItems',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  '$id',
  'id',
  '$anchor',
]);

function resolveLocal(root: SchemaObject, ref: string): SchemaObject | undefined {
  const segments = parseRefPointer(ref);
  const target = segments === undefined ? undefined : resolveSegments(root, segments);
  return target?.found === true && isObject(target.value) ? target.value : undefined;
}

/**
 * Schema objects of `root` that apply to some instance through a keyword other than the
 * conjunctive ones (an `anyOf` branch, a `not`, …), directly or through `$ref`s; undefined when a
 * `$ref` cannot be resolved.
 */
function notOnlyConjunctive(root: SchemaObject): Set<SchemaObject> | undefined {
  const conjunctive = new Set<SchemaObject>();
  const other = new Set<SchemaObject>();
  let resolvable = true;
  const visit = (node: SchemaObject, viaOther: boolean) => {
    const seen = viaOther ? other : conjunctive;
    if (seen.has(node)) return;
    seen.add(node);
    if (typeof node.$ref === 'string') {
      const target = resolveLocal(root, node.$ref);
      if (target === undefined) resolvable = false;
      else visit(target, viaOther);
    }
    for (const { keyword, value } of subschemasOf(node)) {
      if (!isObject(value) || DEFINITIONS.has(keyword)) continue;
      visit(value, viaOther || !CONJUNCTIVE.has(keyword));
    }
  };
  visit(root, false);
  return resolvable ? other : undefined;
}

const canonical = (schema: unknown) => JSON.stringify(sortKeysDeep(schema));

/**
 * The closedness schema of `writer` (see the file comment), or undefined when the writer is not
 * the reader plus closed objects. `reader` must be the reader view of the same schema.
 */
export function writerClosedness(writer: JsonSchema, reader: JsonSchema): JsonSchema | undefined {
  if (!isObject(writer) || !isObject(reader)) return undefined;
  let supported = true;
  walkSchema(writer, (node) => {
    if (Object.keys(node).some((keyword) => UNSUPPORTED.has(keyword))) supported = false;
  });
  if (!supported) return undefined;
  const other = notOnlyConjunctive(writer);
  if (other === undefined) return undefined;
  // Only closed objects reached conjunctively are the writer's own: without them it must be the reader.
  const closedHere = (node: SchemaObject) =>
    node.additionalProperties === false && !other.has(node);
  const opened = mapSchema(writer, (node, { original }) => {
    if (!closedHere(original)) return node;
    const { additionalProperties: _closed, ...rest } = node;
    return rest;
  });
  if (canonical(opened) !== canonical(reader)) return undefined;

  // Which nodes have a closed object at or below them (through conjunctive keywords and `$ref`s).
  const closes = new Map<SchemaObject, boolean>();
  const hasClosed = (node: SchemaObject): boolean => {
    const known = closes.get(node);
    if (known !== undefined) return known;
    closes.set(node, true); // a reference cycle is kept, not simplified away
    let found = closedHere(node);
    if (typeof node.$ref === 'string') {
      const target = resolveLocal(writer, node.$ref);
      if (target !== undefined && hasClosed(target)) found = true;
    }
    for (const { keyword, value } of subschemasOf(node))
      if (CONJUNCTIVE.has(keyword) && isObject(value) && hasClosed(value)) found = true;
    closes.set(node, found);
    return found;
  };
  walkSchema(writer, (node) => void hasClosed(node));

  // `false` subschemas are the reader's to report; here they would report it twice.
  const relaxed = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(relaxed) : value === false ? true : value;
  const closedness = mapSchema(writer, (node, { original, keyword }) => {
    // A subschema that closes nothing checks nothing here (definitions stay, as `{}`, so every
    // `$ref` still resolves).
    if (!hasClosed(original) && keyword !== undefined) return {};
    const kept: SchemaObject = {};
    for (const [name, value] of Object.entries(node)) {
      if (name === '$schema' || name === '$ref' || DEFINITIONS.has(name)) kept[name] = value;
      else if (name === 'additionalProperties') {
        if (isObject(value) || (value === false && closedHere(original))) kept[name] = value;
      } else if (name === 'properties' || name === 'patternProperties') {
        // The names stay: `additionalProperties: false` is judged against them.
        if (isObject(value))
          kept[name] = Object.fromEntries(
            Object.entries(value).map(([key, child]) => [key, relaxed(child)]),
          );
      } else if (CONJUNCTIVE.has(name)) kept[name] = relaxed(value);
    }
    return kept;
  });
  return closedness as JsonSchema;
}
