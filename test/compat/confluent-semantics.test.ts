/**
 * Cases of our own for semantics Confluent's checker has beyond its case files (learned from its
 * comparer and unit tests, written here from scratch): recursive unions, a combination becoming a
 * plain schema, fractional multipleOf, and how its 2020-12 loader reads an empty `properties`.
 */
import { describe, expect, it } from 'vitest';
import { diffSchemas, type JsonSchema } from 'evgen';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

const changes = (original: JsonSchema, update: JsonSchema) =>
  diffSchemas(original, update).changes.map((c) => `${c.type} ${c.path}`);

describe('recursive unions', () => {
  const kinds = [
    'Asset',
    'Basket',
    'Swap',
    'Bond',
    'Option',
    'Future',
    'Forward',
    'Loan',
    'Repo',
    'Equity',
    'Index',
    'Leg',
  ];
  const anyKind = () => ({ oneOf: kinds.map((kind) => ({ $ref: `#/definitions/${kind}` })) });
  /** Every kind refers to every kind twice: a naive walk is exponential. */
  const trade = (assetIdType: string): JsonSchema => ({
    $schema: DRAFT_07,
    type: 'object',
    definitions: Object.fromEntries(
      kinds.map((kind) => [
        kind,
        {
          type: 'object',
          properties: {
            id: { type: kind === 'Asset' ? assetIdType : 'string' },
            underlying: anyKind(),
            reference: anyKind(),
          },
        },
      ]),
    ),
    properties: { tradeId: { type: 'string' }, product: anyKind() },
  });

  it('compares a heavily recursive union with itself: no differences', () => {
    expect(diffSchemas(trade('string'), trade('string'))).toMatchObject({
      compatible: true,
      changes: [],
    });
  });

  it('still finds a type change deep inside it', () => {
    expect(diffSchemas(trade('string'), trade('number')).compatible).toBe(false);
  });

  /**
   * A and B each point (through a one-member oneOf) at C, and C points back at A. A cycle is first
   * assumed to read cleanly; matching the root union must not keep a pair that only looked
   * compatible under that assumption.
   */
  const cyclic = (idOfA: string, idOfB: string): JsonSchema => {
    const node = (idType: string, next: string) => ({
      type: 'object',
      properties: { id: { type: idType }, next: { oneOf: [{ $ref: `#/definitions/${next}` }] } },
    });
    return {
      $schema: DRAFT_07,
      type: 'object',
      definitions: { A: node(idOfA, 'C'), B: node(idOfB, 'C'), C: node('integer', 'A') },
      properties: { root: { oneOf: [{ $ref: '#/definitions/A' }, { $ref: '#/definitions/B' }] } },
    };
  };

  it('does not let a cycle assumed clean hide an incompatible pair in a union', () => {
    // A(integer)→B'(number) looks compatible until the cycle A→C→A meets A(integer) vs A'(boolean).
    const result = diffSchemas(cyclic('integer', 'boolean'), cyclic('boolean', 'number'));
    expect(result.compatible).toBe(false);
    expect(result.changes.map((c) => `${c.type} ${c.path}`)).toEqual([
      'COMBINED_TYPE_SUBSCHEMAS_CHANGED #/properties/root',
    ]);
  });

  it('keeps a compatible recursive evolution compatible', () => {
    expect(diffSchemas(cyclic('integer', 'boolean'), cyclic('number', 'boolean')).compatible).toBe(
      true,
    );
  });
});

describe('recursion through oneOf next to $ref (2020-12)', () => {
  /**
   * `kinds` product types, each a `$ref` to a base plus properties that refer back to the union
   * through another union: the shape that made Confluent's checker hang for hours.
   */
  const products = (kinds: number, backRefs: number, firstTagType = 'string'): JsonSchema => {
    const defs: Record<string, unknown> = {
      SimpleId: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      Base: { type: 'object', properties: { name: { type: 'string' } } },
      ProductOrId: { oneOf: [{ $ref: '#/$defs/SimpleId' }, { $ref: '#/$defs/Product' }] },
      Product: { oneOf: Array.from({ length: kinds }, (_, i) => ({ $ref: `#/$defs/Type${i}` })) },
    };
    for (let i = 0; i < kinds; i++) {
      const properties: Record<string, unknown> = {};
      for (let p = 0; p < backRefs; p++) properties[`ref${p}`] = { $ref: '#/$defs/ProductOrId' };
      properties['tag'] = { type: i === 0 ? firstTagType : 'string', const: `type${i}` };
      defs[`Type${i}`] = {
        $ref: '#/$defs/Base',
        type: 'object',
        properties,
        required: ['ref0', 'tag'],
      };
    }
    return { $schema: DRAFT_2020, $defs: defs, $ref: '#/$defs/Product' };
  };

  it('finishes on 12 kinds × 5 back references, equal and changed', () => {
    expect(diffSchemas(products(12, 5), products(12, 5))).toMatchObject({
      compatible: true,
      changes: [],
    });
    expect(diffSchemas(products(12, 5), products(12, 5, 'number')).compatible).toBe(false);
  });
});

describe('a combination that became one plain schema', () => {
  it('allOf: one conjunct reading what the update reads is PRODUCT_TYPE_NARROWED, its changes at the same path', () => {
    expect(
      changes(
        { allOf: [{ type: 'string', maxLength: 3 }, { minLength: 1 }] },
        { type: 'string', maxLength: 5 },
      ),
    ).toEqual(['PRODUCT_TYPE_NARROWED #/', 'MAX_LENGTH_INCREASED #/maxLength']);
    expect(
      diffSchemas(
        { allOf: [{ type: 'string', maxLength: 3 }, { minLength: 1 }] },
        { type: 'string', maxLength: 5 },
      ).compatible,
    ).toBe(true);
  });

  it('allOf: no conjunct fits is a type change', () => {
    expect(changes({ allOf: [{ type: 'string' }, { maxLength: 3 }] }, { type: 'boolean' })).toEqual(
      ['TYPE_CHANGED #/'],
    );
  });

  it('a union of several alternatives → one of them is a type change (incompatible)', () => {
    expect(
      changes({ anyOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'string' }),
    ).toEqual(['TYPE_CHANGED #/']);
    expect(
      diffSchemas({ oneOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'string' })
        .compatible,
    ).toBe(false);
  });

  it('anything → {} stays compatible and silent', () => {
    expect(changes({ anyOf: [{ type: 'string' }, { type: 'number' }] }, {})).toEqual([]);
  });
});

describe('fractional multipleOf', () => {
  it('a multiple of the old divisor narrows (MULTIPLE_OF_EXPANDED), a divisor of it widens', () => {
    expect(
      diffSchemas({ type: 'number', multipleOf: 0.5 }, { type: 'number', multipleOf: 10 }),
    ).toMatchObject({
      compatible: false,
      changes: [{ type: 'MULTIPLE_OF_EXPANDED', path: '#/multipleOf' }],
    });
    expect(
      changes({ type: 'number', multipleOf: 0.3 }, { type: 'number', multipleOf: 0.1 }),
    ).toEqual(['MULTIPLE_OF_REDUCED #/multipleOf']);
  });
});

describe('an empty properties object per dialect', () => {
  it('draft-07: {"properties": {}} is an object schema, so {} → it is a type change', () => {
    expect(changes({ $schema: DRAFT_07 }, { $schema: DRAFT_07, properties: {} })).toEqual([
      'TYPE_CHANGED #/',
    ]);
  });

  it('2020-12: {"properties": {}} constrains nothing, as in Confluent’s 2020-12 loader', () => {
    expect(changes({ $schema: DRAFT_2020 }, { $schema: DRAFT_2020, properties: {} })).toEqual([]);
    expect(
      changes({ $schema: DRAFT_2020, properties: {} }, { $schema: DRAFT_2020, type: 'object' }),
    ).toEqual(['TYPE_CHANGED #/']);
    // A non-empty properties object still makes an object schema.
    expect(
      changes(
        { $schema: DRAFT_2020, properties: { a: { type: 'string' } } },
        { $schema: DRAFT_2020, properties: { a: { type: 'number' } } },
      ),
    ).toEqual(['TYPE_CHANGED #/properties/a']);
  });
});
