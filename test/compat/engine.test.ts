/**
 * Difference engine rules beyond the Confluent data set: 2020-12 keywords, combined schemas,
 * recursive references, numeric/string bounds, facets of one schema object.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ALL_DIFFERENCE_TYPES,
  diffSchemas,
  DIFFERENCE_TYPES,
  LENIENT_COMPATIBLE,
  STRICT_COMPATIBLE,
  type JsonSchema,
} from 'evgen';

/** 2019-09/2020-12 keywords mean something only there: draft-07 loaders ignore them. */
const D2020 = 'https://json-schema.org/draft/2020-12/schema';

const changes = (original: JsonSchema, update: JsonSchema) =>
  diffSchemas(original, update).changes.map((c) => `${c.type} ${c.path}`);

describe('difference types table', () => {
  it('lists all 132 Confluent types; LENIENT accepts everything STRICT accepts', () => {
    expect(ALL_DIFFERENCE_TYPES).toHaveLength(132);
    for (const type of STRICT_COMPATIBLE) expect(LENIENT_COMPATIBLE.has(type)).toBe(true);
    expect(DIFFERENCE_TYPES.OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL).toEqual({
      strict: false,
      lenient: true,
    });
    expect(DIFFERENCE_TYPES.TYPE_CHANGED).toEqual({ strict: false, lenient: false });
  });

  it('agrees row by row with the published table (test/fixtures/confluent/difference-types.md)', () => {
    const markdown = readFileSync(
      new URL('../fixtures/confluent/difference-types.md', import.meta.url),
      'utf8',
    );
    const published = Object.fromEntries(
      [...markdown.matchAll(/^\| ([A-Z_]+) \| (yes|no) \| (yes|no) \|$/gm)].map((row) => [
        row[1],
        { strict: row[2] === 'yes', lenient: row[3] === 'yes' },
      ]),
    );
    expect(Object.keys(published)).toHaveLength(132);
    expect({ ...DIFFERENCE_TYPES }).toEqual(published);
  });
});

describe('2020-12 keywords', () => {
  const tuple = (items: JsonSchema[], rest: JsonSchema | undefined): JsonSchema => ({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'array',
    prefixItems: items,
    ...(rest !== undefined ? { items: rest } : {}),
  });

  // Paths use Confluent's names in both dialects: `items/N`, `additionalItems`, `dependencies/x`.
  it('prefixItems position added to a closed tuple is compatible, removed from it is not', () => {
    expect(
      changes(
        tuple([{ type: 'string' }], false),
        tuple([{ type: 'string' }, { type: 'number' }], false),
      ),
    ).toEqual(['ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1']);
    const removed = diffSchemas(
      tuple([{ type: 'string' }, { type: 'number' }], false),
      tuple([{ type: 'string' }], false),
    );
    expect(removed.compatible).toBe(false);
    expect(removed.changes.map((c) => c.type)).toEqual(['ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL']);
  });

  it('items after prefixItems is the rest of the tuple (partially open)', () => {
    const result = diffSchemas(
      tuple([{ type: 'string' }], { type: 'string' }),
      tuple([{ type: 'string' }, { type: 'integer' }], { type: 'string' }),
    );
    expect(result.compatible).toBe(false);
    expect(result.changes.map((c) => `${c.type} ${c.path}`).sort()).toEqual([
      'ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1',
      'TYPE_CHANGED #/items/1',
    ]);
  });

  it('a boolean items without a tuple is the rest of an empty tuple', () => {
    const draft = { $schema: 'https://json-schema.org/draft/2020-12/schema' };
    expect(changes({ ...draft, items: true }, { ...draft, items: false })).toEqual([
      'ADDITIONAL_ITEMS_REMOVED #/additionalItems',
    ]);
    expect(changes({ ...draft, items: false }, { ...draft, items: true })).toEqual([
      'ADDITIONAL_ITEMS_ADDED #/additionalItems',
    ]);
    expect(
      changes({ ...draft, items: { type: 'string' } }, { ...draft, items: { type: 'number' } }),
    ).toEqual(['TYPE_CHANGED #/items']);
  });

  it('dependentRequired and dependentSchemas', () => {
    expect(
      changes(
        { $schema: D2020, dependentRequired: { a: ['b'] } },
        { $schema: D2020, dependentRequired: { a: ['b', 'c'] } },
      ),
    ).toEqual(['DEPENDENCY_ARRAY_EXTENDED #/dependencies/a']);
    expect(
      diffSchemas(
        { $schema: D2020, dependentRequired: { a: ['b', 'c'] } },
        { $schema: D2020, dependentRequired: { a: ['b'] } },
      ).compatible,
    ).toBe(true);
    expect(
      changes({ $schema: D2020, dependentSchemas: { a: { required: ['b'] } } }, { $schema: D2020 }),
    ).toEqual([]);
    expect(
      changes(
        { $schema: D2020, type: 'object', dependentSchemas: { a: { required: ['b'] } } },
        { $schema: D2020, type: 'object' },
      ),
    ).toEqual(['DEPENDENCY_SCHEMA_REMOVED #/dependencies/a']);
    expect(
      diffSchemas(
        { $schema: D2020, type: 'object' },
        { $schema: D2020, type: 'object', dependentSchemas: { a: { required: ['b'] } } },
      ).compatible,
    ).toBe(false);
  });

  it('$defs references resolve, also recursively', () => {
    const tree = (valueType: string): JsonSchema => ({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: {
            value: { type: valueType },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
        },
      },
    });
    expect(diffSchemas(tree('string'), tree('string'))).toMatchObject({
      compatible: true,
      changes: [],
    });
    expect(changes(tree('integer'), tree('number'))).toEqual(['TYPE_EXTENDED #/properties/value']);
    expect(changes(tree('string'), tree('number'))).toEqual(['TYPE_CHANGED #/properties/value']);
  });

  it('unevaluatedProperties closes and partially opens objects like additionalProperties', () => {
    expect(
      changes(
        { $schema: D2020, properties: { a: { type: 'string' } }, unevaluatedProperties: false },
        {
          $schema: D2020,
          properties: { a: { type: 'string' }, b: { type: 'string' } },
          unevaluatedProperties: false,
        },
      ),
    ).toEqual(['OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b']);
    expect(
      diffSchemas(
        { $schema: D2020, type: 'object', unevaluatedProperties: true },
        { $schema: D2020, type: 'object', unevaluatedProperties: false },
      ).changes.map((c) => c.type),
    ).toEqual(['UNEVALUATED_PROPERTIES_REMOVED']);
  });
});

describe('combined schemas', () => {
  it('anyOf gaining an alternative extends; losing one narrows', () => {
    expect(
      changes({ anyOf: [{ type: 'string' }] }, { anyOf: [{ type: 'string' }, { type: 'null' }] }),
    ).toEqual(['SUM_TYPE_EXTENDED #/']);
    const narrowed = diffSchemas(
      { anyOf: [{ type: 'string' }, { type: 'null' }] },
      { anyOf: [{ type: 'string' }] },
    );
    expect(narrowed.compatible).toBe(false);
    expect(narrowed.changes.map((c) => c.type)).toContain('SUM_TYPE_NARROWED');
  });

  it('allOf gaining a conjunct is incompatible; allOf → anyOf is compatible', () => {
    expect(
      diffSchemas(
        { allOf: [{ type: 'string' }] },
        { allOf: [{ type: 'string' }, { minLength: 2 }] },
      ).compatible,
    ).toBe(false);
    expect(
      changes(
        { allOf: [{ type: 'string' }, { maxLength: 5 }] },
        { anyOf: [{ type: 'string' }, { maxLength: 5 }] },
      ),
    ).toEqual(['COMBINED_TYPE_EXTENDED #/']);
  });

  it('matches subschemas regardless of order and reports the changes inside them', () => {
    expect(
      changes(
        { oneOf: [{ type: 'string', maxLength: 3 }, { type: 'integer' }] },
        { oneOf: [{ type: 'number' }, { type: 'string', maxLength: 5 }] },
      ),
    ).toEqual(['MAX_LENGTH_INCREASED #/oneOf/0/maxLength', 'TYPE_EXTENDED #/oneOf/1']);
  });

  it('type arrays are unions: ["string"] → ["string","null"] extends', () => {
    expect(diffSchemas({ type: ['string'] }, { type: ['string', 'null'] })).toMatchObject({
      compatible: true,
    });
    expect(diffSchemas({ type: ['string', 'null'] }, { type: 'string' }).compatible).toBe(false);
  });

  it('not: a looser negated schema is incompatible', () => {
    expect(changes({ not: { type: 'string' } }, { not: { type: ['string', 'number'] } })).toEqual([
      'NOT_TYPE_EXTENDED #/not',
    ]);
  });
});

describe('facets of one schema object are compared facet by facet', () => {
  it('reports the enum change itself when type and enum sit together', () => {
    expect(changes({ type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] })).toEqual([
      'ENUM_ARRAY_NARROWED #/enum',
    ]);
    expect(changes({ type: 'string', enum: ['a'] }, { type: 'string', enum: ['a', 'b'] })).toEqual([
      'ENUM_ARRAY_EXTENDED #/enum',
    ]);
  });

  it('adding an enum to a plain type narrows it', () => {
    const result = diffSchemas({ type: 'string' }, { type: 'string', enum: ['a'] });
    expect(result.compatible).toBe(false);
    expect(result.changes.map((c) => c.type)).toEqual(['PRODUCT_TYPE_EXTENDED']);
  });
});

describe('bounds and other keywords', () => {
  it.each([
    [
      { type: 'number', exclusiveMinimum: 1 },
      { type: 'number', exclusiveMinimum: 0 },
      'EXCLUSIVE_MINIMUM_DECREASED #/exclusiveMinimum',
      true,
    ],
    [
      { type: 'number', exclusiveMaximum: 5 },
      { type: 'number', exclusiveMaximum: 4 },
      'EXCLUSIVE_MAXIMUM_DECREASED #/exclusiveMaximum',
      false,
    ],
    [
      { type: 'number' },
      { type: 'number', multipleOf: 0.5 },
      'MULTIPLE_OF_ADDED #/multipleOf',
      false,
    ],
    [
      { type: 'number', multipleOf: 0.5 },
      { type: 'number', multipleOf: 0.1 },
      'MULTIPLE_OF_REDUCED #/multipleOf',
      true,
    ],
    [
      { type: 'number', multipleOf: 2 },
      { type: 'number', multipleOf: 4 },
      'MULTIPLE_OF_EXPANDED #/multipleOf',
      false,
    ],
    [{ type: 'string' }, { type: 'string', pattern: '^a' }, 'PATTERN_ADDED #/pattern', false],
    [
      { type: 'array' },
      { type: 'array', uniqueItems: true },
      'UNIQUE_ITEMS_ADDED #/uniqueItems',
      false,
    ],
    [
      { $schema: D2020, type: 'array', maxContains: 2 },
      { $schema: D2020, type: 'array', maxContains: 3 },
      'MAX_CONTAINS_INCREASED #/maxContains',
      true,
    ],
    [
      { $schema: D2020, type: 'array', minContains: 2 },
      { $schema: D2020, type: 'array', minContains: 3 },
      'MIN_CONTAINS_INCREASED #/minContains',
      false,
    ],
    [
      { type: 'string', default: 'a' },
      { type: 'string', default: 'b' },
      'DEFAULT_CHANGED #/',
      true,
    ],
  ] as const)('%j → %j: %s', (original, update, expected, compatible) => {
    const result = diffSchemas(original, update);
    expect(result.changes.map((c) => `${c.type} ${c.path}`)).toEqual([expected]);
    expect(result.compatible).toBe(compatible);
  });

  it('escapes property names in paths (RFC 6901)', () => {
    expect(
      changes(
        { properties: { 'a/b': { type: 'string' } } },
        { properties: { 'a/b': { type: 'number' } } },
      ),
    ).toEqual(['TYPE_CHANGED #/properties/a~1b']);
  });

  it('refuses a reference it cannot resolve instead of passing it', () => {
    expect(() => diffSchemas({ $ref: '#/definitions/missing' }, {})).toThrow(
      /cannot resolve \$ref/,
    );
  });
});
