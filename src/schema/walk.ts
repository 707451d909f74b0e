/**
 * The one place that knows which JSON Schema keywords hold subschemas. Everything else in a schema
 * (`enum`, `const`, `default`, `examples`, unknown keywords) is data: a `$ref` or `properties` key
 * inside it is not a schema keyword, and walkers never look into it.
 */
import { pointerSegment } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';

export type SchemaObject = Record<string, unknown>;

/**
 * Keywords whose value is one schema. `items` may also be an array of schemas (draft-07 tuples);
 * `contentSchema` is an annotation validators ignore, but it is still a schema.
 */
export const SCHEMA_VALUED_KEYWORDS: ReadonlySet<string> = new Set([
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
export const SCHEMA_ARRAY_KEYWORDS: ReadonlySet<string> = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'prefixItems',
]);
/**
 * Keywords whose value maps names to schemas. Draft-07 `dependencies` values may instead be arrays
 * of property names: those are data.
 */
export const SCHEMA_MAP_KEYWORDS: ReadonlySet<string> = new Set([
  '$defs',
  'definitions',
  'dependencies',
  'dependentSchemas',
  'patternProperties',
  'properties',
]);

/** Where a subschema sits. */
export interface SchemaPosition {
  /** Keyword under which the node sits (`properties`, `allOf`, …); undefined for the root. */
  readonly keyword: string | undefined;
  /** Its name inside a map keyword, its index inside an array keyword. */
  readonly key: string | number | undefined;
  /** JSON pointer of the node in the walked schema ("" for the root). */
  readonly pointer: string;
  /** The schema object holding the keyword (as written); undefined for the root. */
  readonly parent: SchemaObject | undefined;
}

/** One subschema of a schema object: where it sits, and the value (which may be a boolean). */
export interface Subschema {
  readonly keyword: string;
  readonly key: string | number | undefined;
  readonly value: unknown;
}

/** The direct subschemas of a schema object, in document order. */
export function subschemasOf(node: SchemaObject): Subschema[] {
  const found: Subschema[] = [];
  for (const [keyword, value] of Object.entries(node)) {
    if (SCHEMA_VALUED_KEYWORDS.has(keyword)) {
      if (Array.isArray(value))
        value.forEach((item, index) => found.push({ keyword, key: index, value: item }));
      else found.push({ keyword, key: undefined, value });
    } else if (SCHEMA_ARRAY_KEYWORDS.has(keyword) && Array.isArray(value)) {
      value.forEach((item, index) => found.push({ keyword, key: index, value: item }));
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value)) {
      for (const [name, item] of Object.entries(value))
        if (!Array.isArray(item)) found.push({ keyword, key: name, value: item });
    }
  }
  return found;
}

/** The JSON pointer of a subschema (`keyword`, then `key` when inside a map or array) below `pointer`. */
export function childPointer(
  pointer: string,
  keyword: string,
  key: string | number | undefined,
): string {
  return `${pointer}/${pointerSegment(keyword)}${key === undefined ? '' : `/${pointerSegment(key)}`}`;
}

/** Calls `visit` for every schema object, root first, in document order. */
export function walkSchema(
  schema: unknown,
  visit: (node: SchemaObject, position: SchemaPosition) => void,
  position: SchemaPosition = { keyword: undefined, key: undefined, pointer: '', parent: undefined },
): void {
  if (!isObject(schema)) return;
  visit(schema, position);
  for (const { keyword, key, value } of subschemasOf(schema))
    walkSchema(value, visit, {
      keyword,
      key,
      pointer: childPointer(position.pointer, keyword, key),
      parent: schema,
    });
}

export interface MapSchemaOptions {
  /** Subtrees for which this returns true are kept exactly as written (not visited). */
  readonly keepAsWritten?: (node: SchemaObject, position: SchemaPosition) => boolean;
  /** Deep-copy data positions too, so the result shares nothing with the input (default: shared). */
  readonly copyData?: boolean;
}

/**
 * Rebuilds a schema bottom-up: `transform` receives a fresh copy of each schema object whose
 * subschemas are already rebuilt, and the object as written (for identity checks). Keys keep their
 * order; objects are rebuilt with `Object.fromEntries`, so a property named `__proto__` stays a
 * property. The input is never modified.
 */
export function mapSchema(
  schema: unknown,
  transform: (
    node: SchemaObject,
    position: SchemaPosition & { readonly original: SchemaObject },
  ) => SchemaObject,
  options: MapSchemaOptions = {},
  position: SchemaPosition = { keyword: undefined, key: undefined, pointer: '', parent: undefined },
): unknown {
  const copyData = options.copyData === true;
  if (!isObject(schema)) return copyData ? structuredClone(schema) : schema;
  if (options.keepAsWritten?.(schema, position) === true)
    return copyData ? structuredClone(schema) : schema;
  const rebuild = (keyword: string, key: string | number | undefined, value: unknown) =>
    mapSchema(value, transform, options, {
      keyword,
      key,
      pointer: childPointer(position.pointer, keyword, key),
      parent: schema,
    });
  const entries = Object.entries(schema).map(([keyword, value]): [string, unknown] => {
    if (SCHEMA_VALUED_KEYWORDS.has(keyword)) {
      return [
        keyword,
        Array.isArray(value)
          ? value.map((item, index) => rebuild(keyword, index, item))
          : rebuild(keyword, undefined, value),
      ];
    }
    if (SCHEMA_ARRAY_KEYWORDS.has(keyword) && Array.isArray(value))
      return [keyword, value.map((item, index) => rebuild(keyword, index, item))];
    if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value)) {
      return [
        keyword,
        Object.fromEntries(
          Object.entries(value).map(([name, item]) => [
            name,
            Array.isArray(item)
              ? copyData
                ? structuredClone(item)
                : item
              : rebuild(keyword, name, item),
          ]),
        ),
      ];
    }
    return [keyword, copyData ? structuredClone(value) : value];
  });
  return transform(Object.fromEntries(entries), { ...position, original: schema });
}
