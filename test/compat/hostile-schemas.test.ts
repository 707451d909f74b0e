/**
 * Schemas built to exhaust the checker: every comparison ends, with a verdict or with a
 * "too complex to compare" problem located at a JSON pointer — never a stack overflow or a run
 * of minutes. (Outcomes only; the time is measured in the benchmark, not here.)
 */
import { describe, expect, it } from 'vitest';
import {
  checkCatalog,
  checkReadable,
  ComparisonLimitError,
  ComparisonProblem,
  diffSchemas,
  type JsonSchema,
} from 'evgen';
import { catalogOf, eventWith } from './support/hand-catalog.js';

const branch = (i: number, changed = false): JsonSchema => ({
  type: 'object',
  properties: {
    kind: { const: `k${i}` },
    ...Object.fromEntries(
      Array.from({ length: 8 }, (_, p) => [
        `p${p}`,
        { type: p === 3 && changed ? 'integer' : 'number', maximum: 100 + p },
      ]),
    ),
  },
  required: ['kind'],
});
const union = (keyword: string, count: number, changed = false): JsonSchema => ({
  [keyword]: Array.from({ length: count }, (_, i) => branch(i, changed)),
});

/** A binary anyOf tree: 2^depth leaves, and every pair of nodes at one depth is a candidate pair. */
function anyOfTree(depth: number, seed = 1): JsonSchema {
  if (depth === 0) return { type: 'object', properties: { [`x${seed}`]: { type: 'string' } } };
  return { anyOf: [anyOfTree(depth - 1, seed * 2), anyOfTree(depth - 1, seed * 2 + 1)] };
}

function refChain(length: number, end: JsonSchema): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  for (let i = 0; i < length; i++)
    definitions[`d${i}`] = i === length - 1 ? end : { $ref: `#/definitions/d${i + 1}` };
  return { definitions, $ref: '#/definitions/d0' };
}

function propertyRing(length: number): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  for (let i = 0; i < length; i++)
    definitions[`d${i}`] = {
      type: 'object',
      properties: { n: { $ref: `#/definitions/d${(i + 1) % length}` } },
    };
  return { definitions, $ref: '#/definitions/d0' };
}

function limitOf(run: () => unknown): ComparisonLimitError {
  try {
    run();
  } catch (error) {
    if (error instanceof ComparisonLimitError) return error;
    throw error;
  }
  throw new Error('expected the comparison to stop at a limit');
}

describe('checker denial of service', () => {
  it('unions of many branches give a verdict (oneOf 100 vs a changed copy; oneOf 1000 unchanged)', () => {
    expect(checkReadable(union('oneOf', 100), union('oneOf', 100, true), 'evgen').compatible).toBe(
      false,
    );
    expect(diffSchemas(union('oneOf', 1000), union('oneOf', 1000)).changes).toEqual([]);
    expect(checkReadable(union('anyOf', 400), union('anyOf', 400), 'confluent').compatible).toBe(
      true,
    );
  });

  it('a binary anyOf tree of depth 10 stops with a located limit', () => {
    const limit = limitOf(() => checkReadable(anyOfTree(10), anyOfTree(10, 3), 'evgen'));
    expect(limit.message).toMatch(/^too complex to compare: .* \(limit \d+\) at #\//);
    expect(limit.path).toMatch(/^#\/(allOf|anyOf)\//);
  });

  it('a $ref chain of 1200 is followed by policy evgen (verdicts both ways)', () => {
    const evgen = (original: JsonSchema, update: JsonSchema) =>
      checkReadable(original, update, 'evgen').compatible;
    expect(evgen(refChain(1200, { type: 'string' }), refChain(1200, { type: 'string' }))).toBe(
      true,
    );
    expect(evgen(refChain(1200, { type: 'string' }), refChain(1200, { type: 'number' }))).toBe(
      false,
    );
    // Confluent resolves one reference per comparison: a chain's links are never looked through.
    expect(
      diffSchemas(refChain(1200, { type: 'string' }), refChain(1200, { type: 'number' }))
        .compatible,
    ).toBe(true);
  });

  it('a circle of bare $refs is a located limit, not an endless loop or "accepts anything"', () => {
    const circle = {
      definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } },
      type: 'object',
      properties: { x: { $ref: '#/definitions/a' } },
    } as JsonSchema;
    const limit = limitOf(() => checkReadable(circle, circle, 'evgen'));
    expect(limit.path).toBe('#/properties/x');
    // Confluent's one reference per comparison never enters the circle.
    expect(diffSchemas(circle, circle).compatible).toBe(true);
  });

  it('a ring of 2000 object schemas and a chain of 1200 nested properties stop at the depth limit', () => {
    for (const schema of [
      propertyRing(2000),
      (() => {
        const definitions: Record<string, JsonSchema> = {};
        for (let i = 0; i < 1200; i++)
          definitions[`d${i}`] =
            i === 1199
              ? { type: 'string' }
              : { type: 'object', properties: { n: { $ref: `#/definitions/d${i + 1}` } } };
        return { definitions, $ref: '#/definitions/d0' } as JsonSchema;
      })(),
    ]) {
      const limit = limitOf(() => checkReadable(schema, structuredClone(schema), 'evgen'));
      expect(limit.message).toMatch(/deeper than .* \(limit 400\)/);
      expect(limit.path).toMatch(/^#(\/properties\/n)+$/);
    }
  });

  it('check: the limit becomes a too-complex problem at the pointer in the new version’s file', () => {
    const catalog = catalogOf(eventWith([anyOfTree(10), anyOfTree(10, 3)], { mode: 'BACKWARD' }));
    let problem: ComparisonProblem | undefined;
    try {
      checkCatalog(catalog);
    } catch (error) {
      if (!(error instanceof ComparisonProblem)) throw error;
      problem = error;
    }
    expect(problem?.diagnostic).toMatchObject({
      code: 'too-complex',
      file: expect.stringContaining('test/Thing/v2.schema.json'),
      pointer: expect.stringMatching(/^\/(allOf|anyOf)\//),
      message: expect.stringMatching(
        /^too complex to compare: .*\(limit \d+\) — comparing v2 with v1 of test\.Thing$/,
      ),
    });
  });
});
