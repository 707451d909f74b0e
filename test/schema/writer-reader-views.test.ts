/**
 * The invariant the evgen compatibility policy and the generated validators rest on: whatever the
 * strict writer view of a schema accepts, its tolerant reader view accepts. Checked property-based
 * on instances generated from each schema, for the example catalog, every golden case, schemas
 * whose meaning depends on polarity (`not`, `oneOf`, `if`, `$ref` from inside `not`) and a set of
 * random schemas in both dialects.
 */
import { Ajv, type Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { JsonSchema } from '../../src/catalog/model.js';
import { dialectOf, readerSchema, writerSchema } from '../../src/schema/views.js';
import { caseEventsDir, goldenCases } from '../golden/golden-support.js';
import { randomSchema, schemaInstances, seededRandom } from '../support/schema-instances.js';

const addFormats = addFormatsModule.default;
// The options the validators target compiles with, where they change what is accepted.
const OPTIONS: Options = { strict: false, validateFormats: true, ownProperties: true };

function validator(schema: JsonSchema) {
  const ajv = dialectOf(schema) === 'draft-07' ? new Ajv(OPTIONS) : new Ajv2020(OPTIONS);
  addFormats(ajv);
  return ajv.compile(schema as object);
}

/** Instances the writer view accepts but the reader view rejects, and how many the writer accepted. */
function readerRejections(schema: JsonSchema, seed: number, count: number) {
  const writer = validator(writerSchema(schema));
  const reader = validator(readerSchema(schema));
  let accepted = 0;
  const rejected: unknown[] = [];
  for (const instance of schemaInstances(schema, { seed, count })) {
    if (!writer(instance)) continue;
    accepted += 1;
    if (!reader(instance)) rejected.push(instance);
  }
  return { accepted, rejected };
}

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';

describe('writer view ⊆ reader view', () => {
  it('a closed object under `not` stays as written in both views (the reader never rejects what the writer sent)', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: {
        x: { not: { type: 'object', properties: { k: {} }, additionalProperties: false } },
      },
    };
    const payload = { x: { k: 1, z: 2 } };
    expect(validator(writerSchema(schema))(payload)).toBe(true);
    expect(validator(readerSchema(schema))(payload)).toBe(true);
  });

  it('a definition referenced from inside `not` is kept as written everywhere', () => {
    const schema = {
      $schema: D2020,
      $defs: { closed: { type: 'object', properties: { k: {} }, additionalProperties: false } },
      type: 'object',
      properties: { x: { not: { $ref: '#/$defs/closed' } }, y: { $ref: '#/$defs/closed' } },
    };
    const payload = { x: { k: 1, z: 2 }, y: { k: 1 } };
    expect(validator(writerSchema(schema))(payload)).toBe(true);
    expect(validator(readerSchema(schema))(payload)).toBe(true);
  });

  it('oneOf: a payload matching one closed branch but two open ones passes the reader (anyOf there)', () => {
    const schema = {
      $schema: DRAFT7,
      type: 'object',
      properties: {
        x: {
          oneOf: [
            { type: 'object', properties: { a: { type: 'string' } } },
            { type: 'object', properties: { b: { type: 'string' } } },
          ],
        },
      },
    };
    const payload = { x: { a: 'only a' } };
    expect(validator(writerSchema(schema))(payload)).toBe(true);
    expect(validator(readerSchema(schema))(payload)).toBe(true);
    // The reader still checks what each alternative requires.
    expect(validator(readerSchema(schema))({ x: { a: 1 } })).toBe(true); // b-branch, open
    expect(validator(readerSchema(schema))({ x: 'not an object' })).toBe(false);
  });

  const catalogs = goldenCases().map((name) => [name, caseEventsDir(name)] as const);
  it.each(catalogs)('every payload schema of the %s catalog', async (_name, dir) => {
    const catalog = await loadCatalog(dir);
    const versions = catalog.events.flatMap((event) => event.versions);
    expect(versions.length).toBeGreaterThan(0);
    for (const version of versions) {
      const { accepted, rejected } = readerRejections(version.bundled, version.version, 200);
      expect(rejected, version.file).toEqual([]);
      // The property means something only if the writer accepted some generated payloads.
      expect(accepted, `${version.file}: writer accepted no generated instance`).toBeGreaterThan(0);
    }
  });

  it.each(['draft-07', '2020-12'] as const)('random %s schemas', (dialect) => {
    const random = seededRandom(dialect === 'draft-07' ? 7 : 2020);
    let accepted = 0;
    for (let index = 0; index < 60; index += 1) {
      const schema = randomSchema(random, { dialect });
      const result = readerRejections(schema, index + 1, 40);
      expect(result.rejected, JSON.stringify(schema)).toEqual([]);
      accepted += result.accepted;
    }
    expect(accepted).toBeGreaterThan(200);
  });
});
