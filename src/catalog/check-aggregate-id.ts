/**
 * The aggregateId named in event.json must be a required string property of the payload in every
 * version: envelopes take it from the payload, so it can never be absent or disagree. The root
 * object is looked at through local `$ref`s and `allOf` members (how shared bases are composed).
 */
import type { CatalogProblem } from './catalog-error.js';
import { pointerSegment, resolvePointer } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';
import type { JsonSchema } from './model.js';

export function checkAggregateId(
  bundled: JsonSchema,
  aggregateId: string,
  file: string,
): CatalogProblem | undefined {
  const shape = objectShape(bundled, bundled, 0);
  const property = shape.properties.get(aggregateId);
  const at = `/properties/${pointerSegment(aggregateId)}`;
  const rootProperties = isObject(bundled) && isObject(bundled.properties);
  if (property === undefined) {
    return {
      code: 'aggregate-id-missing',
      file,
      pointer: rootProperties ? '/properties' : '',
      message: `the payload has no property "${aggregateId}" (the aggregateId named in event.json)`,
      hint: `add "${aggregateId}": { "type": "string" } to "properties" and to "required", or change aggregateId in event.json`,
    };
  }
  const type = declaredType(bundled, property);
  if (!(type === 'string' || (Array.isArray(type) && type.length === 1 && type[0] === 'string'))) {
    return {
      code: 'aggregate-id-not-string',
      file,
      pointer: rootProperties ? at : '',
      message: `the aggregateId property "${aggregateId}" is not declared "type": "string"`,
      hint: 'aggregate ids are strings (routing keys, Kafka record keys): declare "type": "string"',
    };
  }
  if (!shape.required.has(aggregateId)) {
    return {
      code: 'aggregate-id-optional',
      file,
      pointer: isObject(bundled) && Array.isArray(bundled.required) ? '/required' : '',
      message: `the aggregateId property "${aggregateId}" is optional`,
      hint: `add "${aggregateId}" to the payload's "required" list`,
    };
  }
  return undefined;
}

interface ObjectShape {
  readonly properties: Map<string, unknown>;
  readonly required: Set<string>;
}

/** Properties and required names of an object schema, merged over its local `$ref` and `allOf` parts. */
function objectShape(document: JsonSchema, schema: unknown, depth: number): ObjectShape {
  const shape: ObjectShape = { properties: new Map(), required: new Set() };
  if (!isObject(schema) || depth > 16) return shape;
  if (isObject(schema.properties))
    for (const [name, value] of Object.entries(schema.properties))
      shape.properties.set(name, value);
  if (Array.isArray(schema.required))
    for (const name of schema.required) if (typeof name === 'string') shape.required.add(name);
  const parts: unknown[] = Array.isArray(schema.allOf) ? [...(schema.allOf as unknown[])] : [];
  const target = localRefTarget(document, schema);
  if (target !== undefined) parts.push(target);
  for (const part of parts) {
    const inner = objectShape(document, part, depth + 1);
    for (const [name, value] of inner.properties)
      if (!shape.properties.has(name)) shape.properties.set(name, value);
    for (const name of inner.required) shape.required.add(name);
  }
  return shape;
}

/** The declared `type` of a schema, looking through local `$ref`s (a few hops at most). */
function declaredType(document: JsonSchema, schema: unknown): unknown {
  let current = schema;
  for (let hop = 0; hop < 16 && isObject(current); hop++) {
    if (current.type !== undefined) return current.type;
    current = localRefTarget(document, current);
  }
  return undefined;
}

function localRefTarget(document: JsonSchema, schema: Record<string, unknown>): unknown {
  if (typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#')) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(schema.$ref.slice(1));
  } catch {
    return undefined;
  }
  const target = resolvePointer(document, pointer);
  return target.found ? target.value : undefined;
}
