/**
 * Combined schemas (allOf / anyOf / oneOf) nested in an object property, in draft-07 and
 * 2020-12: criterion changes, alternatives added and removed, duplicates, order, singletons.
 */
import { describe, expect, it } from 'vitest';
import { diffSchemas, type JsonSchema } from 'evgen';

const DIALECTS = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
} as const;

const inProperty = (dialect: string, schema: JsonSchema): JsonSchema => ({
  $schema: dialect,
  type: 'object',
  properties: { prop: schema },
});
const S = { type: 'string' };
const N = { type: 'number' };
const B = { type: 'boolean' };
const E = { enum: ['one', 'two', 'three'] };

// [scenario, original, update, compatible, changes at #/properties/prop]
const SCENARIOS: readonly [string, JsonSchema, JsonSchema, boolean, readonly string[]][] = [
  [
    'reordered allOf members',
    { allOf: [E, S, { maxLength: 5 }] },
    { allOf: [{ maxLength: 5 }, E, S] },
    true,
    [],
  ],
  [
    'allOf member changes type',
    { allOf: [E, S, { maxLength: 5 }] },
    { allOf: [{ maxLength: 5 }, E, N] },
    false,
    ['COMBINED_TYPE_SUBSCHEMAS_CHANGED #'],
  ],
  ['duplicate allOf members in original', { allOf: [S, S] }, { allOf: [S] }, true, []],
  ['duplicate allOf members in update', { allOf: [S] }, { allOf: [S, S] }, true, []],
  ['oneOf gains an alternative', { oneOf: [S] }, { oneOf: [N, S] }, true, ['SUM_TYPE_EXTENDED #']],
  [
    'oneOf gains two alternatives',
    { oneOf: [S] },
    { oneOf: [B, N, S] },
    true,
    ['SUM_TYPE_EXTENDED #'],
  ],
  [
    'oneOf alternative loosened and moved',
    { oneOf: [{ type: 'string', maxLength: 5 }] },
    { oneOf: [B, N, { title: 'my string', type: 'string', maxLength: 8 }] },
    true,
    ['MAX_LENGTH_INCREASED #/oneOf/0/maxLength', 'SUM_TYPE_EXTENDED #', 'TITLE_CHANGED #/oneOf/0'],
  ],
  ['oneOf loses an alternative', { oneOf: [N, S] }, { oneOf: [S] }, false, ['SUM_TYPE_NARROWED #']],
  ['allOf loses a conjunct', { allOf: [E, S] }, { allOf: [S] }, true, ['PRODUCT_TYPE_NARROWED #']],
  ['allOf gains a conjunct', { allOf: [S] }, { allOf: [E, S] }, false, ['PRODUCT_TYPE_EXTENDED #']],
  ['oneOf → anyOf', { oneOf: [S] }, { anyOf: [S] }, true, ['COMBINED_TYPE_EXTENDED #']],
  [
    'oneOf → anyOf with more alternatives',
    { oneOf: [S] },
    { anyOf: [N, S] },
    true,
    ['COMBINED_TYPE_EXTENDED #', 'SUM_TYPE_EXTENDED #'],
  ],
  ['allOf → anyOf', { allOf: [S] }, { anyOf: [S] }, true, ['COMBINED_TYPE_EXTENDED #']],
  [
    'singleton anyOf → oneOf with more alternatives',
    { anyOf: [S] },
    { oneOf: [N, S] },
    true,
    ['COMBINED_TYPE_EXTENDED #', 'SUM_TYPE_EXTENDED #'],
  ],
  ['anyOf → oneOf', { anyOf: [N, S] }, { oneOf: [S] }, false, ['COMBINED_TYPE_CHANGED #']],
  [
    'singleton allOf → oneOf',
    { allOf: [N] },
    { oneOf: [N, S] },
    true,
    ['COMBINED_TYPE_EXTENDED #', 'SUM_TYPE_EXTENDED #'],
  ],
  [
    'singleton anyOf → singleton allOf',
    { anyOf: [S] },
    { allOf: [S] },
    true,
    ['COMBINED_TYPE_EXTENDED #'],
  ],
  [
    'singleton oneOf → singleton allOf',
    { oneOf: [S] },
    { allOf: [S] },
    true,
    ['COMBINED_TYPE_EXTENDED #'],
  ],
  ['anyOf → allOf of two', { anyOf: [S] }, { allOf: [N, S] }, false, ['COMBINED_TYPE_CHANGED #']],
  ['plain → anyOf', S, { anyOf: [N, S] }, true, ['SUM_TYPE_EXTENDED #']],
  ['plain → oneOf', S, { oneOf: [N, S] }, true, ['SUM_TYPE_EXTENDED #']],
  ['plain → singleton allOf', S, { allOf: [S] }, true, []],
  ['plain → allOf of two', S, { allOf: [N, S] }, false, ['TYPE_CHANGED #']],
  [
    'anyOf of objects: property type changes',
    { anyOf: [{ properties: { a: S } }, N] },
    { anyOf: [N, { properties: { a: N } }] },
    false,
    ['COMBINED_TYPE_SUBSCHEMAS_CHANGED #'],
  ],
  [
    'oneOf with $ref alternatives',
    { oneOf: [{ $ref: '#/definitions/s' }, { type: 'null' }] },
    { oneOf: [{ type: 'null' }, S] },
    true,
    [],
  ],
];

describe.each(Object.entries(DIALECTS))('combined schemas in a property (%s)', (_name, dialect) => {
  it.each(SCENARIOS)('%s', (_scenario, original, update, compatible, changes) => {
    const withDefinitions = (schema: JsonSchema): JsonSchema => {
      const root = inProperty(dialect, schema) as Record<string, unknown>;
      // $ref targets live at the root (`definitions` in draft-07, `$defs` in 2020-12).
      if (dialect === DIALECTS['2020-12'])
        return JSON.parse(
          JSON.stringify({ ...root, $defs: { s: S } }).replace(/#\/definitions\//g, '#/$defs/'),
        ) as JsonSchema;
      return { ...root, definitions: { s: S } };
    };
    const result = diffSchemas(withDefinitions(original), withDefinitions(update));
    expect(result.compatible).toBe(compatible);
    expect(
      result.changes.map((c) => `${c.type} ${c.path.replace('#/properties/prop', '#')}`).sort(),
    ).toEqual([...changes].sort());
  });
});
