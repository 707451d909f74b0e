/**
 * Random pairs of small, related payload schemas for the soundness test of policy `evgen`: an
 * original and an update made from it by one to three edits (add, drop or change a keyword, swap
 * `const` and a one-value `enum`, add a no-op, replace a subschema). Covers the keywords whose
 * compatibility is easy to get wrong: formats, string/number/array/object bounds, `pattern`,
 * `contains`, `propertyNames`, `if`/`then`/`else`, dependencies in both spellings, tuples in both
 * spellings (2020-12 `prefixItems` + `items`, draft-07 `items` array + `additionalItems`),
 * `patternProperties`, combinators and `not`. And the families where Confluent's loader and the
 * meaning part ways: a `type` beside another type's keywords, combiner members with several
 * keyword groups, `$ref` chains (a definition that is only a `$ref`) and `$ref` siblings,
 * `additionalProperties`/`items` as `{}`/`true`, `contains`, `format` without `type`, keywords of
 * the other dialect and `default: null`. Not generated: draft-04's boolean `exclusiveMinimum`/
 * `exclusiveMaximum` — catalogs accept only draft-07 and 2020-12, whose meta-schemas (and ajv)
 * refuse it. Deterministic for a seed.
 */
import { isObject } from '../../src/common/json-value.js';
import { walkSchema, type SchemaObject } from '../../src/schema/walk.js';
import type { Random } from './schema-instances.js';

export type PairDialect = 'draft-07' | '2020-12';

const DIALECT_URI: Readonly<Record<PairDialect, string>> = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
};

const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;
const chance = (random: Random, p: number) => random() < p;

const NAMES = ['a', 'b', 'c'];
const FORMATS = ['date', 'email', 'uuid', 'date-time'];

/** Where a payload schema keeps the definitions its `$ref`s name. */
const definitionsKeyword = (dialect: PairDialect) =>
  dialect === '2020-12' ? '$defs' : 'definitions';
const refTo = (dialect: PairDialect, name: string) => `#/${definitionsKeyword(dialect)}/${name}`;

/** A `type` beside keywords of another type (which, by meaning, constrain nothing there). */
const TYPED_WITH_FOREIGN: readonly SchemaObject[] = [
  { type: 'null', required: ['a'] },
  { type: 'boolean', minLength: 1 },
  { type: ['null'], minimum: 8 },
  { type: 'string', minimum: 3 },
  { type: 'number', maxLength: 2 },
  { type: ['string', 'null'], minimum: 1 },
  { type: 'integer', format: 'email' },
];

/** Combiner members made of one or several keyword groups. */
const COMBINER_MEMBERS: readonly SchemaObject[] = [
  { enum: ['x'], type: 'string' },
  { type: 'null', minimum: -5 },
  { minimum: -5 },
  { enum: ['x'] },
  { type: 'string' },
  { type: 'string', maxLength: 2, minimum: 1 },
  {},
];

/** Keywords the other dialect does not know, by the dialect of the schema they are put in. */
const FOREIGN_KEYWORDS: Readonly<Record<PairDialect, readonly SchemaObject[]>> = {
  'draft-07': [
    { minContains: 1 },
    { dependentSchemas: { a: { required: ['b'] } } },
    { dependentRequired: { a: ['b'] } },
    { unevaluatedProperties: false },
    { prefixItems: [{ type: 'string' }] },
  ],
  '2020-12': [{ dependencies: { a: ['b'] } }, { additionalItems: false }],
};

/**
 * A small value schema (`depth` bounds nesting). No `contains` on an array that is itself an
 * array's item: ajv 8.20 validates that wrongly (`{"items": {"contains": S}}` accepts
 * `[["x"], []]`), which is the validator's bug, not the checker's.
 */
function valueSchema(
  random: Random,
  dialect: PairDialect,
  depth: number,
  insideArray = false,
  /** False for definition A itself, so `$ref`s never form a circle. */
  refs = true,
): SchemaObject {
  const kinds = ['string', 'string', 'number', 'enum', 'const', 'empty', 'boolean'];
  kinds.push('typed-foreign', 'format-only');
  if (refs) kinds.push('ref');
  if (depth > 0)
    kinds.push('array', 'array', 'object', 'object', 'anyOf', 'not', 'oneOf', 'members');
  switch (pick(random, kinds)) {
    case 'typed-foreign':
      return structuredClone(pick(random, TYPED_WITH_FOREIGN));
    case 'format-only':
      return { format: pick(random, FORMATS) };
    case 'ref':
      // A, or B which is only a `$ref` to A; sometimes with a sibling keyword.
      return {
        $ref: refTo(dialect, pick(random, ['A', 'B'])),
        ...(chance(random, 0.3) ? { required: [pick(random, NAMES)] } : {}),
      };
    case 'members': {
      const keyword = pick(random, ['anyOf', 'oneOf', 'allOf']);
      const count = 1 + Math.floor(random() * 2);
      return {
        [keyword]: Array.from({ length: count }, () =>
          structuredClone(pick(random, COMBINER_MEMBERS)),
        ),
      };
    }
    case 'string': {
      const schema: SchemaObject = { type: 'string' };
      if (chance(random, 0.3)) schema.format = pick(random, FORMATS);
      if (chance(random, 0.3)) schema.minLength = pick(random, [0, 1, 2]);
      if (chance(random, 0.2)) schema.maxLength = pick(random, [3, 8, 40]);
      if (chance(random, 0.15)) schema.pattern = pick(random, ['^[a-c]+$', '^x', '^[a-z0-9-]*$']);
      return schema;
    }
    case 'number': {
      const schema: SchemaObject = { type: pick(random, ['number', 'integer']) };
      if (chance(random, 0.3)) schema.minimum = pick(random, [0, 1, 5]);
      if (chance(random, 0.2)) schema.exclusiveMaximum = pick(random, [10, 100]);
      if (chance(random, 0.15)) schema.multipleOf = pick(random, [1, 2, 5]);
      return schema;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { enum: chance(random, 0.5) ? ['x'] : ['x', 'y'] };
    case 'const':
      return { const: pick(random, ['x', 'y', 1]) };
    case 'array': {
      const schema: SchemaObject = chance(random, 0.5)
        ? tupleSchema(random, dialect, depth - 1)
        : { type: 'array', items: valueSchema(random, dialect, depth - 1, true) };
      if (schema.items !== undefined && !Array.isArray(schema.items) && chance(random, 0.2))
        schema.items = pick(random, [{}, true]);
      // Without an `items` array, validators ignore `additionalItems` (2020-12: always).
      if (!Array.isArray(schema.items) && chance(random, 0.1)) schema.additionalItems = false;
      if (!insideArray && chance(random, 0.4))
        schema.contains = chance(random, 0.3) ? {} : valueSchema(random, dialect, 0);
      if (dialect === '2020-12' && schema.contains !== undefined && chance(random, 0.5))
        schema.minContains = pick(random, [0, 1, 2]);
      if (chance(random, 0.2)) schema.minItems = pick(random, [0, 1]);
      if (chance(random, 0.2)) schema.maxItems = pick(random, [2, 5]);
      if (chance(random, 0.1)) schema.uniqueItems = pick(random, [true, false]);
      return schema;
    }
    case 'object':
      return objectSchema(random, dialect, depth - 1);
    case 'anyOf':
    case 'oneOf': {
      const keyword = pick(random, ['anyOf', 'oneOf']);
      return {
        [keyword]: [valueSchema(random, dialect, depth - 1), valueSchema(random, dialect, 0)],
      };
    }
    case 'not':
      return { not: valueSchema(random, dialect, 0) };
    default:
      return {};
  }
}

/**
 * A tuple in the dialect's spelling: 2020-12 `prefixItems` with the rest in `items`, draft-07
 * `items` as an array with the rest in `additionalItems`; the rest is left out, closed (`false`),
 * open (`{}`/`true`) or a schema.
 */
function tupleSchema(random: Random, dialect: PairDialect, depth: number): SchemaObject {
  const length = 1 + Math.floor(random() * 2);
  const positions = Array.from({ length }, () => valueSchema(random, dialect, depth, true));
  const schema: SchemaObject =
    dialect === '2020-12'
      ? { type: 'array', prefixItems: positions }
      : { type: 'array', items: positions };
  const restKeyword = dialect === '2020-12' ? 'items' : 'additionalItems';
  const rest = pick(random, ['none', 'false', 'false', 'open', 'schema', 'schema']);
  if (rest === 'false') schema[restKeyword] = false;
  else if (rest === 'open') schema[restKeyword] = pick(random, [{}, true]);
  else if (rest === 'schema') schema[restKeyword] = valueSchema(random, dialect, 0, true);
  return schema;
}

function objectSchema(random: Random, dialect: PairDialect, depth: number): SchemaObject {
  const properties: SchemaObject = {};
  for (const name of NAMES)
    if (chance(random, 0.6)) properties[name] = valueSchema(random, dialect, depth);
  const schema: SchemaObject = { type: 'object', properties };
  const declared = Object.keys(properties);
  if (declared.length > 0 && chance(random, 0.5)) schema.required = [pick(random, declared)];
  if (chance(random, 0.15)) schema.additionalProperties = false;
  else if (chance(random, 0.1)) schema.additionalProperties = pick(random, [{}, true]);
  if (chance(random, 0.1)) Object.assign(schema, pick(random, FOREIGN_KEYWORDS[dialect]));
  if (declared.length > 0 && chance(random, 0.1))
    properties[pick(random, declared)] = { default: null };
  if (chance(random, 0.1)) schema.propertyNames = { maxLength: 1 };
  if (chance(random, 0.1)) schema.patternProperties = { '^x': valueSchema(random, dialect, 0) };
  if (declared.length > 1 && chance(random, 0.15)) addDependency(schema, random, dialect);
  if (declared.length > 0 && chance(random, 0.1)) {
    const name = pick(random, declared);
    schema.if = { properties: { [name]: { const: 'x' } }, required: [name] };
    schema.then = { required: [pick(random, NAMES)] };
    if (chance(random, 0.5)) schema.else = { properties: { c: { type: 'number' } } };
  }
  return schema;
}

function addDependency(schema: SchemaObject, random: Random, dialect: PairDialect): void {
  const [from, to] = [pick(random, NAMES), pick(random, NAMES)];
  const asSchema = chance(random, 0.5);
  const value = asSchema ? { required: [to] } : [to];
  if (dialect === 'draft-07') schema.dependencies = { [from]: value };
  else if (asSchema) schema.dependentSchemas = { [from]: value };
  else schema.dependentRequired = { [from]: value };
}

/**
 * A random payload schema (an object at the root), with definitions A (a value schema) and B
 * (only a `$ref` to A) for its `$ref`s.
 */
export function randomPayloadSchema(random: Random, dialect: PairDialect): SchemaObject {
  return {
    $schema: DIALECT_URI[dialect],
    [definitionsKeyword(dialect)]: {
      A: valueSchema(random, dialect, 0, false, false),
      B: { $ref: refTo(dialect, 'A') },
    },
    ...objectSchema(random, dialect, 2),
  };
}

/** One random edit of one subschema (in place on a copy). */
function edit(schema: SchemaObject, random: Random, dialect: PairDialect): void {
  const nodes: SchemaObject[] = [];
  walkSchema(schema, (node) => nodes.push(node));
  const enums = nodes.filter((node) => Array.isArray(node.enum) && node.enum.length > 1);
  if (enums.length > 0 && chance(random, 0.15)) {
    // Narrowing a value set: the commonest breaking edit, made often enough to be seen.
    const node = pick(random, enums);
    node.enum = (node.enum as unknown[]).slice(1);
    return;
  }
  const node = pick(random, nodes);
  const definitions = schema[definitionsKeyword(dialect)];
  const isDefinition =
    isObject(definitions) && (node === definitions['A'] || node === definitions['B']);
  // The definitions stay: every `$ref` must still resolve.
  const keys = Object.keys(node).filter(
    (key) => key !== '$schema' && key !== definitionsKeyword(dialect),
  );
  switch (pick(random, ['drop', 'drop', 'add', 'add', 'change', 'swap', 'replace'])) {
    case 'drop':
      if (keys.length > 0) delete node[pick(random, keys)];
      return;
    case 'add': {
      const additions: SchemaObject[] = [
        { format: pick(random, FORMATS) },
        { minLength: pick(random, [0, 1]) },
        { maxLength: 4 },
        { minItems: 0 },
        { minProperties: 0 },
        { minimum: pick(random, [0, 3]) },
        { exclusiveMinimum: 0 },
        { uniqueItems: false },
        { required: [] },
        { required: [pick(random, NAMES)] },
        { contains: { const: 'x' } },
        { propertyNames: pick(random, [{ maxLength: 1 }, { pattern: '^[a-c]$' }, {}]) },
        { pattern: '^x' },
        { const: 'x' },
        { enum: ['x'] },
        { type: pick(random, ['string', 'object', 'number']) },
        { additionalProperties: pick(random, [false, true, { type: 'string' }]) },
        { not: { const: 'y' } },
        { if: { required: ['a'] }, then: { required: ['b'] } },
        { type: ['null'] },
        { additionalProperties: pick(random, [{}, true, { oneOf: [{}] }]) },
        { items: pick(random, [{}, true]) },
        { contains: {} },
        dialect === '2020-12'
          ? { contains: { const: 'x' }, minContains: pick(random, [0, 1, 2]) }
          : { contains: { type: 'string' } },
        { default: null },
        ...(isDefinition ? [] : [{ $ref: refTo(dialect, pick(random, ['A', 'B'])) }]),
        { exclusiveMaximum: pick(random, [97, 98]) },
        dialect === '2020-12'
          ? { prefixItems: [pick(random, COMBINER_MEMBERS)] }
          : { items: [pick(random, COMBINER_MEMBERS)] },
        { [dialect === '2020-12' ? 'items' : 'additionalItems']: pick(random, [false, {}, true]) },
        pick(random, FOREIGN_KEYWORDS[dialect]),
        pick(random, TYPED_WITH_FOREIGN),
      ];
      if (isObject(node.properties) && chance(random, 0.1)) {
        // A required property with a default: Confluent forgives it, evgen's readers do not.
        const name = pick(random, NAMES);
        node.properties[name] = { type: 'string', default: 'd' };
        const required = Array.isArray(node.required) ? node.required : [];
        node.required = [...new Set([...required, name])];
        return;
      }
      const addition = pick(random, additions);
      if (chance(random, 0.3) && isObject(node.properties)) addDependency(node, random, dialect);
      else Object.assign(node, structuredClone(addition));
      return;
    }
    case 'change': {
      const tuple = Array.isArray(node.prefixItems)
        ? node.prefixItems
        : Array.isArray(node.items)
          ? node.items
          : undefined;
      if (tuple !== undefined) {
        // A position added or removed at the end, or the rest opened or closed.
        const rest = Array.isArray(node.prefixItems) ? 'items' : 'additionalItems';
        const what = pick(random, ['push', 'pop', 'rest']);
        if (what === 'push') tuple.push(valueSchema(random, dialect, 0, true));
        else if (what === 'pop' && tuple.length > 1) tuple.pop();
        else node[rest] = pick(random, [false, {}, { type: 'string' }]);
      } else if (typeof node.format === 'string') node.format = pick(random, FORMATS);
      else if (typeof node.minLength === 'number')
        node.minLength = Math.max(0, node.minLength + pick(random, [-1, 1]));
      else if (typeof node.minimum === 'number') node.minimum += pick(random, [-1, 1]);
      else if (Array.isArray(node.required)) node.required = [pick(random, NAMES)];
      else if (Array.isArray(node.enum))
        node.enum =
          node.enum.length > 1 && chance(random, 0.5)
            ? node.enum.slice(1)
            : [...new Set([...node.enum, 'z'])];
      else if (isObject(node.properties)) node.properties[pick(random, NAMES)] = {};
      return;
    }
    case 'swap':
      // const ↔ a one-value enum: the same meaning, spelled differently.
      if (node.const !== undefined) {
        node.enum = [node.const];
        delete node.const;
      } else if (Array.isArray(node.enum) && node.enum.length === 1) {
        node.const = node.enum[0];
        delete node.enum;
      }
      return;
    default: {
      if (isObject(node.properties) && Object.keys(node.properties).length > 0)
        node.properties[pick(random, Object.keys(node.properties))] = valueSchema(
          random,
          dialect,
          1,
        );
    }
  }
}

/** An update of `original`: one to three random edits. */
export function editedSchema(
  original: SchemaObject,
  random: Random,
  dialect: PairDialect,
): SchemaObject {
  const update = structuredClone(original);
  const edits = 1 + Math.floor(random() * 3);
  for (let index = 0; index < edits; index++) edit(update, random, dialect);
  return update;
}
