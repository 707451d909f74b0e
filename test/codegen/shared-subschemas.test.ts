/**
 * Which repeated subschemas `shareSubschemas` moves into shared schemas. A shared subschema is a
 * function call at every use, so a leaf of two assertions stays inline (its call site would be as
 * long as its checks); from three assertions it is compiled once. Reference targets move
 * whatever their size. (That the moved validators behave like ajv's own is
 * shared-validators-equivalence.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/catalog/model.js';
import { shareSubschemas } from '../../src/codegen/targets/shared-subschemas.js';

const view = (properties: Record<string, unknown>, definitions?: Record<string, unknown>) =>
  ({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties,
    ...(definitions === undefined ? {} : { definitions }),
  }) as JsonSchema;

describe('shareSubschemas', () => {
  it('leaves a repeated leaf of two assertions inline in every view', () => {
    const id = { type: 'string', format: 'uuid' };
    const { views, shared } = shareSubschemas([
      view({ orderId: id, customerId: id }),
      view({ orderId: id }),
    ]);
    expect(shared).toEqual([]);
    expect(views).toEqual([view({ orderId: id, customerId: id }), view({ orderId: id })]);
  });

  it('shares a repeated subschema of three assertions, annotations not counted', () => {
    const code = { type: 'string', minLength: 3, maxLength: 20, description: 'a code' };
    const twoAndAnnotations = { type: 'string', minLength: 3, description: 'x', title: 'y' };
    const { views, shared } = shareSubschemas([
      view({ code, other: twoAndAnnotations }),
      view({ code, other: twoAndAnnotations }),
    ]);
    expect(shared).toHaveLength(1);
    expect(shared[0]!.schema).toEqual(code);
    const ref = { $ref: shared[0]!.id };
    expect(views).toEqual([
      view({ code: ref, other: twoAndAnnotations }),
      view({ code: ref, other: twoAndAnnotations }),
    ]);
  });

  it('counts the assertions of nested subschemas', () => {
    const money = { type: 'object', properties: { amount: { type: 'integer' } } };
    const { shared } = shareSubschemas([view({ total: money }), view({ total: money })]);
    expect(shared.map((s) => s.schema)).toEqual([money]);
  });

  it('moves a reference target of any size', () => {
    const small = view({ id: { $ref: '#/definitions/Id' } }, { Id: { type: 'string' } });
    const { views, shared } = shareSubschemas([small]);
    expect(shared.map((s) => s.schema)).toEqual([{ type: 'string' }]);
    expect(views[0]).toMatchObject({ properties: { id: { $ref: shared[0]!.id } } });
  });
});
