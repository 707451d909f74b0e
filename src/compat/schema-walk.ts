/**
 * Rebuilds a schema with a function applied to every schema object in it (bottom-up), knowing
 * which keywords hold subschemas so data (`enum`, `const`, `default`, `examples`) is never touched.
 */
import { isJsonObject } from './schema-document.js';

const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_VALUES = [
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];

export type SchemaObject = { [keyword: string]: unknown };

/** `skip`: keywords whose subschemas are copied unchanged (not visited). */
export function mapSchema(
  schema: unknown,
  visit: (node: SchemaObject) => SchemaObject,
  skip: ReadonlySet<string> = new Set(),
): unknown {
  if (!isJsonObject(schema)) return schema;
  const copy: SchemaObject = { ...schema };
  const recurse = (value: unknown) => mapSchema(value, visit, skip);
  const visits = (keyword: string) => !skip.has(keyword);
  for (const keyword of SCHEMA_MAPS.filter(visits)) {
    const map = copy[keyword];
    if (isJsonObject(map))
      copy[keyword] = Object.fromEntries(
        Object.entries(map).map(([key, value]) => [key, recurse(value)]),
      );
  }
  for (const keyword of SCHEMA_LISTS.filter(visits)) {
    const list = copy[keyword];
    if (Array.isArray(list)) copy[keyword] = list.map(recurse);
  }
  for (const keyword of SCHEMA_VALUES.filter(visits)) {
    if (copy[keyword] !== undefined) copy[keyword] = recurse(copy[keyword]);
  }
  const items = copy['items'];
  if (Array.isArray(items)) copy['items'] = items.map(recurse);
  else if (items !== undefined) copy['items'] = recurse(items);
  const dependencies = copy['dependencies'];
  if (isJsonObject(dependencies) && visits('dependencies')) {
    copy['dependencies'] = Object.fromEntries(
      Object.entries(dependencies).map(([key, value]) => [
        key,
        Array.isArray(value) ? value : recurse(value),
      ]),
    );
  }
  return visit(copy);
}
