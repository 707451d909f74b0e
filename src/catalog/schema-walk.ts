/**
 * Walks a JSON Schema by keyword, visiting only schema positions. Values of `enum`, `const`,
 * `default`, `examples` and unknown keywords are data, so a `$ref` key inside them is not a reference.
 */
import { isObject } from './json-pointer.js';
import { pointerSegment } from './catalog-error.js';

/** Keywords whose value is one schema (or, for `items` in draft-07, possibly an array of schemas). */
const SCHEMA_VALUED = new Set([
  'additionalItems',
  'additionalProperties',
  'contains',
  'contentSchema',
  'else',
  'if',
  'items',
  'not',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** Keywords whose value is an array of schemas. */
const ARRAY_OF_SCHEMAS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const MAP_OF_SCHEMAS = new Set([
  '$defs',
  'definitions',
  'dependentSchemas',
  'patternProperties',
  'properties',
]);

export interface SchemaVisit {
  /** The schema object being visited. */
  readonly node: Record<string, unknown>;
  /** Its JSON pointer within the document. */
  readonly pointer: string;
}

/** Calls `visit` for every schema object in the document, root first, in document order. */
export function walkSchemaObjects(
  schema: unknown,
  visit: (visit: SchemaVisit) => void,
  pointer = '',
): void {
  if (!isObject(schema)) return;
  visit({ node: schema, pointer });
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${pointerSegment(keyword)}`;
    if (SCHEMA_VALUED.has(keyword)) {
      if (Array.isArray(value))
        value.forEach((item, index) => walkSchemaObjects(item, visit, `${at}/${index}`));
      else walkSchemaObjects(value, visit, at);
    } else if (ARRAY_OF_SCHEMAS.has(keyword) && Array.isArray(value)) {
      value.forEach((item, index) => walkSchemaObjects(item, visit, `${at}/${index}`));
    } else if ((MAP_OF_SCHEMAS.has(keyword) || keyword === 'dependencies') && isObject(value)) {
      // draft-07 `dependencies` values are schemas or arrays of property names; arrays are skipped.
      for (const [name, child] of Object.entries(value))
        walkSchemaObjects(child, visit, `${at}/${pointerSegment(name)}`);
    }
  }
}

/**
 * A deep copy of the schema in which `transform` may replace any schema object's keywords;
 * data positions are copied verbatim.
 */
export function mapSchemaObjects(
  schema: unknown,
  transform: (node: Record<string, unknown>, pointer: string) => Record<string, unknown>,
  pointer = '',
): unknown {
  if (!isObject(schema)) return structuredClone(schema);
  const entries: [string, unknown][] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${pointerSegment(keyword)}`;
    if (SCHEMA_VALUED.has(keyword)) {
      entries.push([
        keyword,
        Array.isArray(value)
          ? value.map((item, index) => mapSchemaObjects(item, transform, `${at}/${index}`))
          : mapSchemaObjects(value, transform, at),
      ]);
    } else if (ARRAY_OF_SCHEMAS.has(keyword) && Array.isArray(value)) {
      entries.push([
        keyword,
        value.map((item, index) => mapSchemaObjects(item, transform, `${at}/${index}`)),
      ]);
    } else if ((MAP_OF_SCHEMAS.has(keyword) || keyword === 'dependencies') && isObject(value)) {
      entries.push([
        keyword,
        Object.fromEntries(
          Object.entries(value).map(([name, child]) => [
            name,
            mapSchemaObjects(child, transform, `${at}/${pointerSegment(name)}`),
          ]),
        ),
      ]);
    } else {
      entries.push([keyword, structuredClone(value)]);
    }
  }
  // fromEntries defines own properties: a key named `__proto__` stays a key, never a prototype.
  const result: Record<string, unknown> = Object.fromEntries(entries);
  return transform(result, pointer);
}
