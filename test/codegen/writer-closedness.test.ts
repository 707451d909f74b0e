/**
 * When the validators target compiles a writer as "its reader, plus a closedness-only check":
 * only when the writer view is the reader view plus `additionalProperties: false` on objects
 * reached conjunctively. The check keeps the property names and the way down to each closed
 * object, nothing else. (That the result validates exactly like the writer is checked on many
 * schemas in shared-validators-equivalence.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/catalog/model.js';
import { writerClosedness } from '../../src/codegen/targets/writer-closedness.js';
import { readerSchema, writerSchema } from '../../src/schema/views.js';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';
const closedness = (schema: object) =>
  writerClosedness(writerSchema(schema as JsonSchema), readerSchema(schema as JsonSchema));

describe('writerClosedness', () => {
  it('keeps names, closed objects and the way to them; drops every other check', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      definitions: { money: { type: 'object', properties: { amount: { type: 'integer' } } } },
      properties: {
        id: { type: 'string', format: 'uuid' },
        lines: { type: 'array', minItems: 1, items: { $ref: '#/definitions/money' } },
      },
      required: ['id'],
    };
    expect(closedness(schema)).toEqual({
      $schema: DRAFT7,
      definitions: {
        money: { properties: { amount: {} }, additionalProperties: false },
      },
      properties: { id: {}, lines: { items: { $ref: '#/definitions/money' } } },
      additionalProperties: false,
    });
  });

  it('is not used where the writer differs from the reader in more than closed objects', () => {
    const branches = [
      { type: 'object', properties: { a: { type: 'string' } } },
      { type: 'object', properties: { b: { type: 'string' } } },
    ];
    // oneOf over closed branches (the reader has anyOf over open ones).
    expect(closedness({ $schema: DRAFT7, properties: { x: { oneOf: branches } } })).toBeUndefined();
    // A closed object inside anyOf is not a conjunct of the whole.
    expect(closedness({ $schema: DRAFT7, properties: { x: { anyOf: branches } } })).toBeUndefined();
    // 2020-12 combined schemas are closed with unevaluatedProperties.
    expect(closedness({ $schema: D2020, type: 'object', allOf: branches })).toBeUndefined();
    // draft-07 combined schemas are closed over names the writer adds.
    expect(closedness({ $schema: DRAFT7, type: 'object', allOf: branches })).toBeUndefined();
  });

  it('leaves what the author closed inside `not` to the reader, which keeps it too', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: {
        x: { not: { type: 'object', properties: { k: {} }, additionalProperties: false } },
      },
    };
    expect(closedness(schema)).toEqual({
      $schema: DRAFT7,
      properties: { x: {} },
      additionalProperties: false,
    });
  });
});
