/**
 * The event module's validators (one ajv instance per event, annotations dropped, identical
 * subschemas and every `$ref` target moved into shared schemas, writers compiled as their reader
 * plus closedness where they can be) accept and reject exactly what
 * plain ajv accepts and rejects when it compiles each writer and reader view on its own with the
 * same options, and report the same errors (instance path, keyword, parameters, and the message
 * users see: ajv's own there, the runtime's from keyword and parameters here; order and ajv's
 * `schemaPath` may differ). Checked on generated instances of the example catalog,
 * every golden case, a synthetic catalog, hand-written reference shapes and random schemas.
 */
import addFormatsModule from 'ajv-formats';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { JsonSchema } from '../../src/catalog/model.js';
import { withContainsItemFloor } from '../../src/codegen/targets/contains-item-floor.js';
import { newAjv, standaloneValidators, viewSources } from '../../src/codegen/targets/validators.js';
import { violationFromSchemaError } from '../../src/runtime/payload-validator.js';
import { dialectOf, readerSchema, writerSchema } from '../../src/schema/views.js';
import { caseEventsDir, goldenCases } from '../golden/golden-support.js';
import { randomSchema, schemaInstances, seededRandom } from '../support/schema-instances.js';
import { writeSyntheticCatalog } from '../support/synthetic-catalog.js';

const addFormats = addFormatsModule.default;
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const scratch = join(REPO, 'tmp', `shared-validators-${randomBytes(4).toString('hex')}`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}
type Check = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

/**
 * Plain ajv, one view alone, with the target's options and its `contains` floor, and with ajv's
 * messages (the generated code has none; the runtime makes them).
 */
function plain(view: JsonSchema): Check {
  const ajv = newAjv(dialectOf(view), { messages: true });
  addFormats(ajv);
  return ajv.compile(withContainsItemFloor(view, dialectOf(view)) as object) as Check;
}

let modules = 0;
/** The pattern engine generated code imports from evgen's runtime. */
const linearPatternModule = new URL('../../src/runtime/linear-pattern.ts', import.meta.url).href;
/**
 * The target's standalone code for the writer and reader views of `schemas` (as it compiles an
 * event's versions), imported as a module: writer, reader, writer, reader, …
 */
async function shared(schemas: readonly JsonSchema[]): Promise<Check[]> {
  const names = schemas.flatMap((_, index) => [`writer${index}`, `reader${index}`]);
  const { code } = standaloneValidators(
    schemas.flatMap((schema, index) => viewSources(schema, `writer${index}`, `reader${index}`)),
  );
  mkdirSync(scratch, { recursive: true });
  const file = join(scratch, `module${modules++}.mjs`);
  writeFileSync(
    file,
    `import { createRequire } from 'node:module';\nimport { linearPattern } from ${JSON.stringify(linearPatternModule)};\nconst require = createRequire(import.meta.url);\n${code}\nexport { ${names.join(', ')} };\n`,
  );
  const module = (await import(pathToFileURL(file).href)) as Record<string, Check>;
  return names.map((name) => module[name]!);
}

/** Errors as users see them: the violations with their messages, and ajv's parameters. */
const errorSet = (errors: readonly AjvError[] | null | undefined) =>
  (errors ?? [])
    .map((error) => JSON.stringify([violationFromSchemaError(error), error.params]))
    .sort();

/** Compares the shared module with plain ajv on instances of every schema; returns how many passed. */
async function compare(schemas: readonly JsonSchema[], count: number): Promise<number> {
  const views = schemas.flatMap((schema) => [writerSchema(schema), readerSchema(schema)]);
  const compiled = await shared(schemas);
  let accepted = 0;
  for (const [index, schema] of schemas.entries()) {
    const instances = schemaInstances(schema, { seed: index + 1, count });
    for (const offset of [0, 1]) {
      const view = views[index * 2 + offset]!;
      const reference = plain(view);
      const subject = compiled[index * 2 + offset]!;
      for (const instance of instances) {
        const expected = reference(instance);
        const actual = subject(instance);
        const where = `${JSON.stringify(view)}\n${JSON.stringify(instance)}`;
        expect(actual, where).toBe(expected);
        if (expected) accepted += 1;
        else expect(errorSet(subject.errors), where).toEqual(errorSet(reference.errors));
      }
    }
  }
  return accepted;
}

/** Per schema: whether its writer is compiled as its reader plus closedness. */
const splitWriters = (schemas: readonly JsonSchema[]) =>
  schemas.map((schema) => viewSources(schema, 'w', 'r')[0]!.alsoPasses !== undefined);

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';
const MONEY = {
  type: 'object',
  properties: { amount: { type: 'integer', minimum: 0 }, currency: { enum: ['EUR', 'USD'] } },
  required: ['amount', 'currency'],
};

/** Reference shapes the sharing must keep: nested, recursive, into-definition and root refs. */
function referenceShapes(dialect: string): JsonSchema[] {
  const defs = dialect === D2020 ? '$defs' : 'definitions';
  const base = (extra: Record<string, unknown>) => ({
    $schema: dialect,
    type: 'object',
    [defs]: {
      money: MONEY,
      line: {
        type: 'object',
        properties: { price: { $ref: `#/${defs}/money` }, sku: { type: 'string', minLength: 2 } },
        required: ['sku'],
      },
      tree: {
        type: 'object',
        properties: {
          label: { type: 'string' },
          children: { type: 'array', items: { $ref: `#/${defs}/tree` } },
        },
      },
      identified: {
        $id: 'urn:test:identified',
        type: 'object',
        properties: { id: { type: 'string', minLength: 1 } },
      },
    },
    properties: {
      total: { $ref: `#/${defs}/money` },
      lines: { type: 'array', items: { $ref: `#/${defs}/line` } },
      amountOnly: { $ref: `#/${defs}/money/properties/amount` },
      tree: { $ref: `#/${defs}/tree` },
      who: { $ref: `#/${defs}/identified` },
      self: { anyOf: [{ type: 'null' }, { $ref: '#' }] },
      not: { not: { $ref: `#/${defs}/money` } },
      ...extra,
    },
    required: ['total'],
  });
  // Without a root reference, a `not` or an `$id`, the writer is the reader plus closedness.
  const conjunctive = (extra: Record<string, unknown>) => {
    const schema = base(extra) as Record<string, Record<string, unknown>>;
    const { self: _self, not: _not, who: _who, ...properties } = schema.properties!;
    const { identified: _identified, ...definitions } = schema[defs]!;
    return { ...schema, properties, [defs]: definitions };
  };
  return [
    base({}),
    base({ tax: { $ref: `#/${defs}/money` }, note: { type: 'string', maxLength: 5 } }),
    base({ tax: { allOf: [{ $ref: `#/${defs}/money` }], title: 'documented' } }),
    conjunctive({}),
    conjunctive({
      tax: { $ref: `#/${defs}/money` },
      notes: { type: 'array', items: { $ref: `#/${defs}/line` } },
    }),
  ];
}

describe('shared validators behave as each view compiled alone', () => {
  it.each(goldenCases())('every event of the %s catalog', async (name) => {
    const catalog = await loadCatalog(caseEventsDir(name));
    let accepted = 0;
    for (const event of catalog.events)
      accepted += await compare(
        event.versions.map((version) => version.bundled),
        60,
      );
    expect(accepted).toBeGreaterThan(0);
  });

  it('a synthetic catalog (definitions shared by versions, nested objects, arrays)', async () => {
    const dir = join(scratch, 'synthetic');
    writeSyntheticCatalog(dir, { events: 4 });
    const catalog = await loadCatalog(dir);
    let accepted = 0;
    for (const event of catalog.events)
      accepted += await compare(
        event.versions.map((version) => version.bundled),
        60,
      );
    expect(accepted).toBeGreaterThan(0);
  });

  it.each([DRAFT7, D2020])(
    'nested, recursive, into-definition and root references (%s)',
    async (dialect) => {
      const shapes = referenceShapes(dialect);
      expect(splitWriters(shapes)).toEqual([false, false, false, true, true]);
      expect(await compare(shapes, 80)).toBeGreaterThan(0);
    },
  );

  it.each(['draft-07', '2020-12'] as const)(
    'random %s schemas, three per module',
    async (dialect) => {
      const random = seededRandom(dialect === 'draft-07' ? 17 : 2021);
      let accepted = 0;
      const split: boolean[] = [];
      for (let index = 0; index < 20; index += 1) {
        const schemas = [0, 1, 2].map(() => randomSchema(random, { dialect }) as JsonSchema);
        split.push(...splitWriters(schemas));
        accepted += await compare(schemas, 30);
      }
      expect(accepted).toBeGreaterThan(100);
      // Both ways of compiling a writer are exercised.
      expect(split).toContain(true);
      expect(split).toContain(false);
    },
  );
});
