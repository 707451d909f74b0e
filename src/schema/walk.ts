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

/**
 * Which of the three kinds above a keyword is (1 valued, 2 array, 3 map), in one lookup: walks ask
 * for every keyword of every node, and most keywords (type, format, enum, …) are in none of them.
 */
const SUBSCHEMA_KIND: ReadonlyMap<string, 1 | 2 | 3> = new Map<string, 1 | 2 | 3>([
  ...[...SCHEMA_VALUED_KEYWORDS].map((keyword) => [keyword, 1] as const),
  ...[...SCHEMA_ARRAY_KEYWORDS].map((keyword) => [keyword, 2] as const),
  ...[...SCHEMA_MAP_KEYWORDS].map((keyword) => [keyword, 3] as const),
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

/**
 * Calls `visit` for each direct subschema of a schema object, in document order, without
 * building a list (walks call this for every node).
 */
export function forEachSubschema(
  node: SchemaObject,
  visit: (keyword: string, key: string | number | undefined, value: unknown) => void,
): void {
  for (const keyword of Object.keys(node)) {
    const kind = SUBSCHEMA_KIND.get(keyword);
    if (kind === undefined) continue;
    const value = node[keyword];
    if (kind === 1) {
      if (Array.isArray(value))
        for (let index = 0; index < value.length; index++) visit(keyword, index, value[index]);
      else visit(keyword, undefined, value);
    } else if (kind === 2) {
      if (Array.isArray(value))
        for (let index = 0; index < value.length; index++) visit(keyword, index, value[index]);
    } else if (isObject(value)) {
      for (const name of Object.keys(value)) {
        const item = value[name];
        if (!Array.isArray(item)) visit(keyword, name, item);
      }
    }
  }
}

/** The direct subschemas of a schema object, in document order. */
export function subschemasOf(node: SchemaObject): Subschema[] {
  const found: Subschema[] = [];
  forEachSubschema(node, (keyword, key, value) => found.push({ keyword, key, value }));
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

export const ROOT: SchemaPosition = {
  keyword: undefined,
  key: undefined,
  pointer: '',
  parent: undefined,
};

/**
 * A position below another one. Its pointer is built only when asked for: most visitors never
 * read it, and building one per node was a large part of walking a catalog.
 */
export class ChildPosition implements SchemaPosition {
  #pointer: string | undefined;

  constructor(
    readonly keyword: string,
    readonly key: string | number | undefined,
    readonly parent: SchemaObject,
    private readonly above: SchemaPosition,
  ) {}

  get pointer(): string {
    return (this.#pointer ??= childPointer(this.above.pointer, this.keyword, this.key));
  }
}

/** Calls `visit` for every schema object, root first, in document order. */
export function walkSchema(
  schema: unknown,
  visit: (node: SchemaObject, position: SchemaPosition) => void,
  position: SchemaPosition = ROOT,
): void {
  if (!isObject(schema)) return;
  visit(schema, position);
  forEachSubschema(schema, (keyword, key, value) => {
    if (isObject(value))
      walkSchema(value, visit, new ChildPosition(keyword, key, schema, position));
  });
}

export interface MapSchemaOptions {
  /** Subtrees for which this returns true are kept exactly as written (not visited). */
  readonly keepAsWritten?: (node: SchemaObject, position: SchemaPosition) => boolean;
  /** Deep-copy data positions too, so the result shares nothing with the input (default: shared). */
  readonly copyData?: boolean;
}

/** A position handed to mapSchema's transform: where the node sits, and the node as written. */
export type MappedPosition = SchemaPosition & { readonly original: SchemaObject };

/** The position of a node being mapped, with a pointer built only when asked for. */
class MapPosition implements MappedPosition {
  constructor(
    private readonly at: SchemaPosition,
    readonly original: SchemaObject,
  ) {}

  get keyword(): string | undefined {
    return this.at.keyword;
  }

  get key(): string | number | undefined {
    return this.at.key;
  }

  get parent(): SchemaObject | undefined {
    return this.at.parent;
  }

  get pointer(): string {
    return this.at.pointer;
  }
}

/**
 * A deep copy of a JSON value (what schemas hold), cheaper than structuredClone for the many small
 * arrays and objects of a schema; anything else is handed to structuredClone.
 */
function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    setOwn(copy, key, copyJson((value as Record<string, unknown>)[key]));
  return copy;
}

/** Sets an own property, also one named `__proto__` (an assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else target[key] = value;
}

/**
 * Rebuilds a schema bottom-up: `transform` receives a fresh copy of each schema object whose
 * subschemas are already rebuilt, and the object as written (for identity checks). Keys keep their
 * order; a property named `__proto__` stays a property. The input is never modified.
 */
export function mapSchema(
  schema: unknown,
  transform: (node: SchemaObject, position: MappedPosition) => SchemaObject,
  options: MapSchemaOptions = {},
  position: SchemaPosition = ROOT,
): unknown {
  const copyData = options.copyData === true;
  if (!isObject(schema)) return copyData ? copyJson(schema) : schema;
  if (options.keepAsWritten?.(schema, position) === true)
    return copyData ? copyJson(schema) : schema;
  const rebuild = (keyword: string, key: string | number | undefined, value: unknown) =>
    isObject(value)
      ? mapSchema(value, transform, options, new ChildPosition(keyword, key, schema, position))
      : copyData
        ? copyJson(value)
        : value;
  const copy: Record<string, unknown> = {};
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword];
    const kind = SUBSCHEMA_KIND.get(keyword);
    let mapped: unknown;
    if (kind === 1) {
      mapped = Array.isArray(value)
        ? value.map((item, index) => rebuild(keyword, index, item))
        : rebuild(keyword, undefined, value);
    } else if (kind === 2 && Array.isArray(value)) {
      mapped = value.map((item, index) => rebuild(keyword, index, item));
    } else if (kind === 3 && isObject(value)) {
      const map: Record<string, unknown> = {};
      for (const name of Object.keys(value)) {
        const item = value[name];
        setOwn(
          map,
          name,
          Array.isArray(item) ? (copyData ? copyJson(item) : item) : rebuild(keyword, name, item),
        );
      }
      mapped = map;
    } else
      mapped = copyData && typeof value === 'object' && value !== null ? copyJson(value) : value;
    setOwn(copy, keyword, mapped);
  }
  return transform(copy, new MapPosition(position, schema));
}
