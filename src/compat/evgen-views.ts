/**
 * The `evgen` policy's view of a schema pair. evgen's writers validate payloads strictly, so data
 * never carries a property its writer schema does not declare: the writer schema is checked as a
 * *closed* content model. evgen's readers ignore properties they do not know: the reader schema is
 * checked as an *open* one. Maps (`additionalProperties: {…}`, `patternProperties`) stay as written.
 */
import { mapSchema, type SchemaObject } from './schema-walk.js';

/**
 * Only schemas that describe the payload's own values are viewed: inside `not`, conditions,
 * `contains`, `propertyNames` and dependency schemas, "closed"/"open" would change the meaning.
 */
const NOT_VIEWED: ReadonlySet<string> = new Set([
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'dependencies',
  'dependentSchemas',
]);

function describesObjects(node: SchemaObject): boolean {
  const type = node['type'];
  if (type === 'object') return true;
  if (Array.isArray(type)) return type.includes('object');
  return type === undefined && (node['properties'] !== undefined || node['required'] !== undefined);
}

/** Every object schema without its own rule for extras gets `additionalProperties: false`. */
export function asClosedWriter(schema: unknown): unknown {
  return mapSchema(
    schema,
    (node) => {
      if (!describesObjects(node)) return node;
      const additional = node['additionalProperties'];
      if (
        (additional === undefined || additional === true) &&
        node['patternProperties'] === undefined &&
        node['unevaluatedProperties'] === undefined
      ) {
        return { ...node, additionalProperties: false };
      }
      return node;
    },
    NOT_VIEWED,
  );
}

/** `additionalProperties: false` / `unevaluatedProperties: false` are dropped: readers tolerate extras. */
export function asOpenReader(schema: unknown): unknown {
  return mapSchema(
    schema,
    (node) => {
      if (node['additionalProperties'] !== false && node['unevaluatedProperties'] !== false)
        return node;
      const { additionalProperties, unevaluatedProperties, ...rest } = node;
      const open: SchemaObject = { ...rest };
      if (additionalProperties !== false && additionalProperties !== undefined)
        open['additionalProperties'] = additionalProperties;
      if (unevaluatedProperties !== false && unevaluatedProperties !== undefined)
        open['unevaluatedProperties'] = unevaluatedProperties;
      return open;
    },
    NOT_VIEWED,
  );
}
