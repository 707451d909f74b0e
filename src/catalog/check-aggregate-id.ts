/**
 * The aggregateId named in event.json must be a required string property of the payload in every
 * version: envelopes take it from the payload, so it can never be absent or disagree.
 */
import type { CatalogProblem } from './catalog-error.js';
import { isObject, resolvePointer } from './json-pointer.js';
import type { JsonSchema } from './model.js';

export function checkAggregateId(bundled: JsonSchema, aggregateId: string, file: string): CatalogProblem | undefined {
  const properties = isObject(bundled) && isObject(bundled.properties) ? bundled.properties : undefined;
  const property = properties !== undefined && Object.prototype.hasOwnProperty.call(properties, aggregateId) ? properties[aggregateId] : undefined;
  const at = `/properties/${aggregateId}`;
  if (property === undefined) {
    return {
      code: 'aggregate-id-missing',
      file,
      pointer: properties === undefined ? '' : '/properties',
      message: `the payload has no property "${aggregateId}" (the aggregateId named in event.json)`,
      hint: `add "${aggregateId}": { "type": "string" } to "properties" and to "required", or change aggregateId in event.json`,
    };
  }
  const resolved = followLocalRefs(bundled, property);
  const type = isObject(resolved) ? resolved.type : undefined;
  if (!(type === 'string' || (Array.isArray(type) && type.length === 1 && type[0] === 'string'))) {
    return {
      code: 'aggregate-id-not-string',
      file,
      pointer: at,
      message: `the aggregateId property "${aggregateId}" is not declared "type": "string"`,
      hint: 'aggregate ids are strings (routing keys, Kafka record keys): declare "type": "string"',
    };
  }
  const required = isObject(bundled) && Array.isArray(bundled.required) ? bundled.required : [];
  if (!required.includes(aggregateId)) {
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

/** Follows `$ref`s inside an already bundled schema (all local), at most a few hops. */
function followLocalRefs(document: JsonSchema, schema: unknown): unknown {
  let current = schema;
  for (let hop = 0; hop < 16 && isObject(current) && typeof current.$ref === 'string' && current.$ref.startsWith('#'); hop++) {
    const target = resolvePointer(document, decodeURIComponent(current.$ref.slice(1)));
    if (!target.found) return undefined;
    current = target.value;
  }
  return current;
}
