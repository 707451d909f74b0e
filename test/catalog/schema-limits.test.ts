/**
 * Loader bounds against hostile files: a size limit per file, enum uniqueness checked in linear time (ajv's
 * meta-schema check compares every pair of values), and `$ref` depth, union width and schema
 * size limits that stop a schema before ajv, json-schema-to-typescript or the checker can take
 * minutes or overflow the stack. Outcomes only; time is measured by test/bench/hostile.bench.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError, type CatalogProblem } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import {
  DRAFT_2020,
  eventJson,
  oneEvent,
  payloadSchema,
  tempCatalog,
  type CatalogFiles,
  type TempCatalog,
} from './temp-catalog.js';

const created: TempCatalog[] = [];
afterEach(async () => {
  for (const catalog of created.splice(0)) await catalog.cleanup();
});

async function load(files: CatalogFiles) {
  const catalog = await tempCatalog(files);
  created.push(catalog);
  return loadCatalog(catalog.events);
}

async function problems(files: CatalogFiles): Promise<CatalogProblem[]> {
  try {
    await load(files);
  } catch (error) {
    if (error instanceof CatalogError) return [...error.problems];
    throw error;
  }
  throw new Error('expected the catalog to be refused');
}

const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`);

describe('enum uniqueness', () => {
  it('an enum of 100,000 distinct values loads whole', async () => {
    const catalog = await load(
      oneEvent({}, payloadSchema({ code: { type: 'string', enum: values(100_000) } })),
    );
    const schema = catalog.events[0]!.versions[0]!.bundled as {
      properties: { code: { enum: string[] } };
    };
    expect(schema.properties.code.enum).toHaveLength(100_000);
    expect(schema.properties.code.enum[99_999]).toBe('v99999');
  }, 120_000);

  it('a repeat among 100,000 values is one located problem (draft-07)', async () => {
    const list = [...values(100_000), 'v5', 'v7'];
    const found = await problems(
      oneEvent({}, payloadSchema({ code: { type: 'string', enum: list } })),
    );
    expect(found).toEqual([
      expect.objectContaining({
        code: 'duplicate-enum-value',
        file: expect.stringMatching(/shop\/OrderPlaced\/v1\.schema\.json$/),
        pointer: '/properties/code/enum/100000',
        message: 'enum value "v5" repeats the value at index 5 (2 repeated values in this enum)',
        hint: 'list each enum value once',
      }),
    ]);
  }, 120_000);

  it('values equal as JSON repeat even when written differently (key order, 1 vs 1.0)', async () => {
    const found = await problems(
      oneEvent(
        {},
        payloadSchema(
          {
            a: {
              enum: [
                { x: 1, y: 2 },
                { y: 2, x: 1 },
              ],
            },
            b: { enum: [1, 2, 1.0] },
          },
          { $schema: DRAFT_2020 },
        ),
      ),
    );
    expect(found.map((problem) => [problem.code, problem.pointer])).toEqual([
      ['duplicate-enum-value', '/properties/a/enum/1'],
      ['duplicate-enum-value', '/properties/b/enum/2'],
    ]);
  });

  it('distinct values that only look alike are fine ("1" and 1, null and "null")', async () => {
    await expect(
      load(oneEvent({}, payloadSchema({ a: { enum: ['1', 1, null, 'null', [1], { '1': 1 }] } }))),
    ).resolves.toBeDefined();
  });
});

describe('schema complexity limits', () => {
  const ring = (length: number, extra: Record<string, unknown> = {}) =>
    payloadSchema(
      { data: { $ref: '#/definitions/d0' } },
      {
        definitions: Object.fromEntries(
          Array.from({ length }, (_, i) => [
            `d${i}`,
            { type: 'object', properties: { n: { $ref: `#/definitions/d${(i + 1) % length}` } } },
          ]),
        ),
        ...extra,
      },
    );

  it('a ring of 500 definitions: the $ref past depth 100 is named', async () => {
    const found = await problems(oneEvent({}, ring(500)));
    expect(found).toEqual([
      expect.objectContaining({
        code: 'schema-too-complex',
        pointer: '/definitions/d99/properties/n/$ref',
        message: '$refs lead one into another more than 100 deep (limit 100)',
        hint: expect.stringContaining('a recursive type needs only one definition'),
      }),
    ]);
  });

  it('recursion and a chain of 100 $refs are fine', async () => {
    await expect(load(oneEvent({}, ring(1)))).resolves.toBeDefined();
    const chain = payloadSchema(
      { data: { $ref: '#/definitions/d0' } },
      {
        definitions: Object.fromEntries(
          Array.from({ length: 100 }, (_, i) => [
            `d${i}`,
            i === 99 ? { type: 'string' } : { $ref: `#/definitions/d${i + 1}` },
          ]),
        ),
      },
    );
    await expect(load(oneEvent({}, chain))).resolves.toBeDefined();
  });

  it('more than 100 branches in one anyOf/oneOf, and more than 2000 subschemas', async () => {
    const branches = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ type: 'object', properties: { [`k${i}`]: {} } }));
    const found = await problems(
      oneEvent(
        {},
        payloadSchema({
          a: { oneOf: branches(101) },
          b: { anyOf: branches(100) },
          c: { properties: Object.fromEntries(values(2000).map((name) => [name, {}])) },
        }),
      ),
    );
    expect(found.map((problem) => [problem.pointer, problem.message])).toEqual([
      ['/properties/a/oneOf', '101 branches in one oneOf (limit 100)'],
      [
        expect.stringMatching(/^\/properties\/c\/properties\/v\d+$/),
        'more than 2000 subschemas in one version (limit 2000)',
      ],
    ]);
  });

  it('a catalog file over 2 MB is refused before it is read (a 3 MB description)', async () => {
    const found = await problems(
      oneEvent({
        'shop/OrderPlaced/event.json': eventJson('shop', 'OrderPlaced', {
          description: 'x'.repeat(3 * 1024 * 1024),
        }),
      }),
    );
    expect(found).toEqual([
      expect.objectContaining({
        code: 'file-too-large',
        file: expect.stringMatching(/shop\/OrderPlaced\/event\.json$/),
        pointer: '',
        message: expect.stringMatching(/^the file is 3\.0 MB; .* \(limit 2097152 bytes\)$/),
      }),
    ]);
  });
});
