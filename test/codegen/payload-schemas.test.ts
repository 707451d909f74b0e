import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import type { JsonSchema } from '../../src/catalog/model.js';
import { typesSchema } from '../../src/codegen/targets/payload-schemas.js';
import { readerSchema, writerSchema } from '../../src/schema/views.js';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';

function accepts(schema: JsonSchema, value: unknown): boolean {
  const is2020 = typeof schema === 'object' && schema.$schema === D2020;
  const ajv = is2020 ? new Ajv2020({ strict: false }) : new Ajv({ strict: false });
  return ajv.validate<unknown>(schema as object, value);
}

describe('writer view (strict)', () => {
  it('closes every object that does not say otherwise, and keeps explicit choices', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { type: 'string' } } },
        map: { type: 'object', additionalProperties: { type: 'number' } },
        open: { type: 'object', additionalProperties: true },
        list: { type: 'array', items: { type: 'object', properties: { c: { type: 'string' } } } },
      },
    };
    const writer = writerSchema(schema);
    expect(
      accepts(writer, { a: { b: 'x' }, map: { any: 1 }, open: { z: 1 }, list: [{ c: 'y' }] }),
    ).toBe(true);
    expect(accepts(writer, { x: 1 })).toBe(false);
    expect(accepts(writer, { a: { b: 'x', y: 1 } })).toBe(false);
    expect(accepts(writer, { list: [{ c: 'y', d: 1 }] })).toBe(false);
    expect(accepts(writer, { map: { any: 'not a number' } })).toBe(false);
    // The input is not modified.
    expect(schema.properties.a).not.toHaveProperty('additionalProperties');
  });

  it('draft-07 allOf: the parent is closed over the union of its branches, branches stay open', () => {
    const schema = {
      $schema: DRAFT7,
      definitions: {
        base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
      allOf: [{ $ref: '#/definitions/base' }, { properties: { extra: { type: 'integer' } } }],
      type: 'object',
      properties: { own: { type: 'boolean' } },
    };
    const writer = writerSchema(schema);
    expect(accepts(writer, { id: 'x', extra: 1, own: true })).toBe(true);
    expect(accepts(writer, { id: 'x', undeclared: 1 })).toBe(false);
    expect(accepts(writer, { extra: 1 })).toBe(false); // base's `required` still applies
  });

  it('anyOf/oneOf without parent properties: each branch is closed on its own', () => {
    const schema = {
      $schema: DRAFT7,
      oneOf: [
        {
          type: 'object',
          properties: { kind: { const: 'a' }, a: { type: 'string' } },
          required: ['kind'],
        },
        {
          type: 'object',
          properties: { kind: { const: 'b' }, b: { type: 'string' } },
          required: ['kind'],
        },
      ],
    };
    const writer = writerSchema(schema);
    expect(accepts(writer, { kind: 'a', a: 'x' })).toBe(true);
    expect(accepts(writer, { kind: 'a', b: 'x' })).toBe(false);
  });

  it('2020-12 combinations use unevaluatedProperties so properties declared in branches stay allowed', () => {
    const schema = {
      $schema: D2020,
      $defs: { audit: { type: 'object', properties: { at: { type: 'string' } } } },
      allOf: [{ $ref: '#/$defs/audit' }],
      type: 'object',
      properties: { id: { type: 'string' } },
    };
    const writer = writerSchema(schema);
    expect(writer).toMatchObject({ unevaluatedProperties: false });
    expect(accepts(writer, { id: 'x', at: 'now' })).toBe(true);
    expect(accepts(writer, { id: 'x', other: 1 })).toBe(false);
  });
});

describe('reader view (tolerant)', () => {
  it('lifts additionalProperties/unevaluatedProperties false everywhere, keeps every other rule', () => {
    const schema = {
      $schema: D2020,
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1 },
        e: { enum: ['x'] },
        inner: {
          type: 'object',
          properties: { s: { type: 'string' } },
          required: ['s'],
          additionalProperties: false,
        },
        map: { type: 'object', additionalProperties: { type: 'number' } },
      },
      required: ['n'],
      additionalProperties: false,
      unevaluatedProperties: false,
    };
    const reader = readerSchema(schema);
    expect(accepts(reader, { n: 1, unknown: true, inner: { s: 'x', more: 1 } })).toBe(true);
    expect(accepts(reader, { n: 0 })).toBe(false);
    expect(accepts(reader, { n: 1, e: 'y' })).toBe(false);
    expect(accepts(reader, { n: 1, inner: {} })).toBe(false);
    expect(accepts(reader, {})).toBe(false);
    expect(accepts(reader, { n: 1, map: { k: 'not a number' } })).toBe(false);
  });
});

describe('types view', () => {
  it('names the root exactly, prefixes nested names, drops code-bearing keywords', () => {
    const schema = {
      $schema: DRAFT7,
      title: 'OrderCreated',
      description: 'desc',
      type: 'object',
      definitions: { money: { type: 'object', properties: { a: { type: 'integer' } } } },
      properties: {
        total: { $ref: '#/definitions/money' },
        nested: { title: '*/ process.exit(1) /*', type: 'object', tsType: 'any; process.exit(1)' },
      },
    };
    const types = typesSchema(
      schema,
      'OrderCreatedV2Payload',
      'OrderCreatedV2',
      'order/OrderCreated/v2.schema.json',
    ) as Record<string, any>;
    expect(types.title).toBe('OrderCreatedV2Payload');
    expect(types.description).toBe('OrderCreated: desc');
    expect(types.definitions.money.title).toBe('OrderCreatedV2Money');
    expect(types.properties.nested.title).toBe('OrderCreatedV2ProcessExit1');
    expect(types.properties.nested).not.toHaveProperty('tsType');
  });

  it('reports two different schemas that would get the same type name', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: {
        a: { title: 'Money', type: 'string' },
        b: { title: 'money', type: 'integer' },
      },
    };
    expect(() => typesSchema(schema, 'XV1Payload', 'XV1', 'x/X/v1.schema.json')).toThrow(
      CatalogError,
    );
    expect(() => typesSchema(schema, 'XV1Payload', 'XV1', 'x/X/v1.schema.json')).toThrow(
      /XV1Money/,
    );
    const problems = (() => {
      try {
        typesSchema(schema, 'XV1Payload', 'XV1', 'x/X/v1.schema.json');
      } catch (error) {
        return (error as CatalogError).problems;
      }
      return [];
    })();
    // Both places are named: the pointer of one, and the other in the message.
    expect(problems).toEqual([
      expect.objectContaining({
        file: 'x/X/v1.schema.json',
        pointer: '/properties/b',
        message: expect.stringContaining('/properties/a'),
      }),
    ]);
  });
});

describe('writer view: conditionals and tests', () => {
  it('if/then/else: properties added by then/else are allowed, the if test is left as written', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: { kind: { enum: ['card', 'cash'] } },
      required: ['kind'],
      if: { properties: { kind: { const: 'card' } } },
      then: { properties: { last4: { type: 'string' } }, required: ['last4'] },
      else: { properties: { change: { type: 'integer' } } },
    };
    const writer = writerSchema(schema) as Record<string, any>;
    expect(writer.if).toEqual(schema.if);
    expect(accepts(writer, { kind: 'card', last4: '4242' })).toBe(true);
    expect(accepts(writer, { kind: 'cash', change: 5 })).toBe(true);
    expect(accepts(writer, { kind: 'card' })).toBe(false);
    expect(accepts(writer, { kind: 'cash', other: 1 })).toBe(false);
  });

  it('not: the negated schema is not closed (closing it would accept more)', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: { a: { type: 'string' } },
      not: { type: 'object', properties: { a: { const: 'x' } }, required: ['a'] },
    };
    const writer = writerSchema(schema) as Record<string, any>;
    expect(writer.not).toEqual(schema.not);
    expect(accepts(writer, { a: 'x' })).toBe(false);
    expect(accepts(writer, { a: 'y' })).toBe(true);
  });

  it('oneOf of $refs without parent properties: the referenced definitions are closed', () => {
    const schema = {
      $schema: D2020,
      $defs: {
        percent: {
          type: 'object',
          properties: { percent: { type: 'number' } },
          required: ['percent'],
        },
        fixed: {
          type: 'object',
          properties: { amount: { type: 'integer' } },
          required: ['amount'],
        },
      },
      type: 'object',
      properties: { discount: { oneOf: [{ $ref: '#/$defs/percent' }, { $ref: '#/$defs/fixed' }] } },
    };
    const writer = writerSchema(schema);
    expect(accepts(writer, { discount: { percent: 5 } })).toBe(true);
    expect(accepts(writer, { discount: { percent: 5, amount: 3 } })).toBe(false);
    expect(accepts(readerSchema(schema), { discount: { percent: 5, note: 'x' } })).toBe(true);
  });
});
