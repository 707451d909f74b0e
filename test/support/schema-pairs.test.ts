/**
 * The soundness test of policy `evgen` (test/compat/evgen-soundness.test.ts) means something only
 * for the keyword families its pairs contain: this fails when a family disappears from the
 * generator's output (test/support/schema-pairs.ts), and checks that generated instances reach
 * into tuples, `contains` and dependencies rather than missing them.
 */
import { describe, expect, it } from 'vitest';
import { isObject } from '../../src/common/json-value.js';
import { walkSchema, type SchemaObject } from '../../src/schema/walk.js';
import { validator } from '../compat/support/view-validators.js';
import { editedSchema, randomPayloadSchema, type PairDialect } from './schema-pairs.js';
import { schemaInstances, seededRandom } from './schema-instances.js';

const SEEDS = 300; // the pairs `npm test` runs

/** Keywords that constrain only one JSON type ("integer" counts as "number"). */
const KEYWORD_TYPE: Readonly<Record<string, string>> = {
  minLength: 'string',
  maxLength: 'string',
  pattern: 'string',
  format: 'string',
  minimum: 'number',
  maximum: 'number',
  exclusiveMinimum: 'number',
  exclusiveMaximum: 'number',
  multipleOf: 'number',
  required: 'object',
  properties: 'object',
  minProperties: 'object',
  items: 'array',
  prefixItems: 'array',
  minItems: 'array',
  maxItems: 'array',
};
const GROUP_OF: Readonly<Record<string, string>> = {
  ...KEYWORD_TYPE,
  type: 'type',
  enum: 'value',
  const: 'value',
};

const typesOf = (node: SchemaObject): string[] =>
  (Array.isArray(node.type) ? node.type : [node.type]).map((type) =>
    type === 'integer' ? 'number' : String(type),
  );

interface Pair {
  readonly dialect: PairDialect;
  readonly nodes: SchemaObject[];
  readonly schemas: readonly SchemaObject[];
}

type Family = (pair: Pair) => boolean;
const some =
  (test: (node: SchemaObject, pair: Pair) => boolean): Family =>
  (pair) =>
    pair.nodes.some((node) => test(node, pair));
const inDialect =
  (dialect: PairDialect, test: (node: SchemaObject) => boolean): Family =>
  (pair) =>
    pair.dialect === dialect && pair.nodes.some(test);
const isEmptySchema = (value: unknown) =>
  value === true || (isObject(value) && Object.keys(value).length === 0);
const refChain = (pair: Pair) =>
  pair.schemas.some((schema) => {
    const definitions = schema[pair.dialect === '2020-12' ? '$defs' : 'definitions'];
    if (!isObject(definitions) || !isObject(definitions['B'])) return false;
    const onlyRef = Object.keys(definitions['B']).join() === '$ref';
    let usesB = false;
    walkSchema(schema, (node) => {
      if (typeof node.$ref === 'string' && node.$ref.endsWith('/B')) usesB = true;
    });
    return onlyRef && usesB;
  });

const FAMILIES: Readonly<Record<string, Family>> = {
  'type beside another type’s keywords': some(
    (node) =>
      node.type !== undefined &&
      Object.keys(node).some(
        (key) => KEYWORD_TYPE[key] !== undefined && !typesOf(node).includes(KEYWORD_TYPE[key]),
      ),
  ),
  'combiner member with several keyword groups': some((node) =>
    ['anyOf', 'oneOf', 'allOf'].some(
      (keyword) =>
        Array.isArray(node[keyword]) &&
        (node[keyword] as unknown[]).some(
          (member) =>
            isObject(member) &&
            new Set(Object.keys(member).flatMap((key) => GROUP_OF[key] ?? [])).size > 1,
        ),
    ),
  ),
  '$ref chain (a definition that is only a $ref)': refChain,
  'draft-07 $ref with siblings': inDialect(
    'draft-07',
    (node) => typeof node.$ref === 'string' && Object.keys(node).length > 1,
  ),
  '2020-12 $ref with siblings': inDialect(
    '2020-12',
    (node) => typeof node.$ref === 'string' && Object.keys(node).length > 1,
  ),
  '2020-12 $defs': inDialect('2020-12', (node) => isObject(node.$defs)),
  '2020-12 prefixItems': inDialect('2020-12', (node) => Array.isArray(node.prefixItems)),
  '2020-12 prefixItems with items false': inDialect(
    '2020-12',
    (node) => Array.isArray(node.prefixItems) && node.items === false,
  ),
  '2020-12 prefixItems with items a schema': inDialect(
    '2020-12',
    (node) => Array.isArray(node.prefixItems) && isObject(node.items),
  ),
  '2020-12 dependentRequired': inDialect('2020-12', (node) => isObject(node.dependentRequired)),
  '2020-12 dependentSchemas': inDialect('2020-12', (node) => isObject(node.dependentSchemas)),
  '2020-12 minContains': inDialect('2020-12', (node) => node.minContains !== undefined),
  'draft-07 items array (tuple)': inDialect('draft-07', (node) => Array.isArray(node.items)),
  'draft-07 tuple with additionalItems false': inDialect(
    'draft-07',
    (node) => Array.isArray(node.items) && node.additionalItems === false,
  ),
  'draft-07 tuple with additionalItems a schema': inDialect(
    'draft-07',
    (node) => Array.isArray(node.items) && isObject(node.additionalItems),
  ),
  'draft-07 additionalItems without an items array (ignored)': inDialect(
    'draft-07',
    (node) => node.additionalItems !== undefined && !Array.isArray(node.items),
  ),
  'draft-07 dependencies': inDialect('draft-07', (node) => isObject(node.dependencies)),
  'additionalProperties {}/true': some((node) => isEmptySchema(node.additionalProperties)),
  'items {}/true': some((node) => isEmptySchema(node.items)),
  contains: some((node) => node.contains !== undefined),
  'format without type': some((node) => node.format !== undefined && node.type === undefined),
  'draft-07 with 2020-12 keywords': inDialect('draft-07', (node) =>
    ['minContains', 'dependentSchemas', 'dependentRequired', 'unevaluatedProperties'].some(
      (key) => key in node,
    ),
  ),
  'draft-07 with prefixItems': inDialect('draft-07', (node) => 'prefixItems' in node),
  '2020-12 with dependencies': inDialect('2020-12', (node) => 'dependencies' in node),
  '2020-12 with additionalItems': inDialect('2020-12', (node) => 'additionalItems' in node),
  'default: null': some((node) => node.default === null),
};

function generatedPairs(): Pair[] {
  const pairs: Pair[] = [];
  // The same draws as the soundness test: dialect, original, update.
  for (let seed = 1; seed <= SEEDS; seed++) {
    const random = seededRandom(seed);
    const dialect: PairDialect = random() < 0.5 ? 'draft-07' : '2020-12';
    const original = randomPayloadSchema(random, dialect);
    const update = editedSchema(original, random, dialect);
    const nodes: SchemaObject[] = [];
    for (const schema of [original, update]) walkSchema(schema, (node) => nodes.push(node));
    pairs.push({ dialect, nodes, schemas: [original, update] });
  }
  return pairs;
}

describe('the soundness test’s pairs', () => {
  it(`contain every keyword family in at least 1% of ${SEEDS} seeds`, () => {
    const pairs = generatedPairs();
    const counts = Object.fromEntries(
      Object.entries(FAMILIES).map(([name, family]) => [name, pairs.filter(family).length]),
    );
    const rare = Object.entries(counts).filter(([, count]) => count < SEEDS / 100);
    expect(rare, JSON.stringify(counts, null, 1)).toEqual([]);
  });
});

describe('generated instances reach into', () => {
  const lengths = (schema: SchemaObject) => {
    const valid = validator(schema);
    return new Set(
      schemaInstances(schema, { count: 60 })
        .filter((value) => valid(value))
        .map((value) => (value as unknown[]).length),
    );
  };

  it('2020-12 tuples: shorter than, as long as and longer than prefixItems', () => {
    const found = lengths({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
      items: { type: 'boolean' },
    });
    expect([...found].some((length) => length < 2)).toBe(true);
    expect(found.has(2)).toBe(true);
    expect([...found].some((length) => length > 2)).toBe(true);
  });

  it('draft-07 tuples: shorter than, as long as and longer than `items`', () => {
    const found = lengths({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }, { type: 'number' }],
      additionalItems: { type: 'boolean' },
    });
    expect([...found].some((length) => length < 2)).toBe(true);
    expect(found.has(2)).toBe(true);
    expect([...found].some((length) => length > 2)).toBe(true);
  });

  it('closed tuples: no instance past the positions is valid, yet some are tried', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      prefixItems: [{ type: 'string' }],
      items: false,
    };
    expect(lengths(schema)).toEqual(new Set([0, 1]));
  });

  it('`contains` with `minContains` and dependencies: most instances are valid', () => {
    for (const schema of [
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'array',
        items: { type: 'string' },
        contains: { const: 'x' },
        minContains: 2,
      },
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'number' } },
        dependentRequired: { a: ['b'] },
        dependentSchemas: { b: { required: ['a'] } },
      },
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'number' } },
        required: ['a'],
        dependencies: { a: ['b'] },
      },
    ]) {
      const valid = validator(schema);
      const instances = schemaInstances(schema, { count: 40, extraPropertyChance: 0 });
      expect(instances.filter((value) => valid(value)).length).toBeGreaterThan(20);
    }
  });
});
