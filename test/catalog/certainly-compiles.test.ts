/**
 * `certainlyCompiles` lets the catalog loader skip ajv's compile: it must never say "compiles"
 * for a schema ajv refuses (the loader would then accept what `evgen build` refuses). Checked on
 * every kind of schema the tests have — the project's events, the synthetic benchmark catalog,
 * Confluent's published cases, the soundness generator's pairs — and on each of them broken in
 * the ways ajv refuses, against ajv with the loader's own options.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { certainlyCompiles } from '../../src/catalog/certainly-compiles.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { SchemaCheckers, type Dialect } from '../../src/catalog/schema-dialect.js';
import { loadConfluentCases } from '../compat/support/confluent-cases.js';
import { editedSchema, randomPayloadSchema } from '../support/schema-pairs.js';
import { seededRandom } from '../support/schema-instances.js';
import { writeSyntheticCatalog } from '../support/synthetic-catalog.js';

interface Sample {
  readonly name: string;
  readonly schema: unknown;
  readonly dialect: Dialect;
}

const checkers = new SchemaCheckers();
const ajvCompiles = (sample: Sample) =>
  checkers.compileError(structuredClone(sample.schema), sample.dialect) === undefined;

function dialectOf(schema: unknown): Dialect {
  const declared = (schema as { $schema?: unknown } | null)?.$schema;
  return typeof declared === 'string' && declared.includes('2020-12') ? '2020-12' : 'draft-07';
}

const temporary = mkdtempSync(join(tmpdir(), 'evgen-certainly-compiles-'));
afterAll(() => rmSync(temporary, { recursive: true, force: true }));

async function catalogSamples(events: string, label: string): Promise<Sample[]> {
  const catalog = await loadCatalog(events);
  return catalog.events.flatMap((event) =>
    event.versions.map((version) => ({
      name: `${label} ${event.eventType} v${version.version}`,
      schema: version.bundled,
      dialect: dialectOf(version.bundled),
    })),
  );
}

function confluentSamples(): Sample[] {
  const files = [
    'diff-schema-examples.json',
    'diff-schema-examples-2020-12.json',
    'diff-combined-schema-examples.json',
    'diff-combined-schema-examples-2020-12.json',
  ];
  return files.flatMap((file) =>
    loadConfluentCases(file).flatMap((testCase) =>
      [testCase.original_schema, testCase.update_schema].map((schema, index) => ({
        name: `${file} ${testCase.description} ${index === 0 ? 'original' : 'update'}`,
        schema,
        dialect: dialectOf(schema),
      })),
    ),
  );
}

function generatedSamples(count: number): Sample[] {
  const samples: Sample[] = [];
  for (let seed = 1; seed <= count; seed++) {
    const random = seededRandom(seed);
    const dialect: Dialect = random() < 0.5 ? 'draft-07' : '2020-12';
    const original = randomPayloadSchema(random, dialect);
    samples.push({ name: `generated ${seed}`, schema: original, dialect });
    samples.push({
      name: `generated ${seed} edited`,
      schema: editedSchema(original, random, dialect),
      dialect,
    });
  }
  return samples;
}

/** Every object at a schema position or below, with a setter: where a breakage is planted. */
function objectsIn(
  value: unknown,
  found: Record<string, unknown>[] = [],
): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const item of value) objectsIn(item, found);
  else if (typeof value === 'object' && value !== null) {
    found.push(value as Record<string, unknown>);
    for (const child of Object.values(value)) objectsIn(child, found);
  }
  return found;
}

/** Ways ajv refuses a schema (or the walk must give up), each planted into one object. */
const BREAKAGES: readonly [string, (target: Record<string, unknown>) => void][] = [
  ['pattern that is no RegExp', (target) => (target.pattern = '(')],
  ['pattern valid only without the u flag', (target) => (target.pattern = '\\-')],
  ['patternProperties key that is no RegExp', (target) => (target.patternProperties = { '[': {} })],
  ['$ref to nothing', (target) => (target.$ref = '#/definitions/nowhere')],
  ['$ref into the data of an enum', (target) => (target.$ref = '#/enum/0')],
  ['empty enum', (target) => (target.enum = [])],
  ['nested $id', (target) => (target.$id = 'http://example.com/x')],
  ['draft-04 id', (target) => (target.id = 'x')],
  ['nullable', (target) => (target.nullable = true)],
  ['unknown type', (target) => (target.type = 'strin')],
  ['type with nullable false', (target) => ((target.type = 'null'), (target.nullable = false))],
  ['format named like an Object member', (target) => (target.format = 'constructor')],
  ['$ref with an anchor', (target) => (target.$ref = '#anchor')],
];

function brokenVariants(sample: Sample, random: () => number): Sample[] {
  return BREAKAGES.map(([what, plant]) => {
    const schema = structuredClone(sample.schema);
    const targets = objectsIn(schema);
    if (targets.length > 0) plant(targets[Math.floor(random() * targets.length)]!);
    return { name: `${sample.name} + ${what}`, schema, dialect: sample.dialect };
  });
}

describe('certainlyCompiles', () => {
  it('says "compiles" only where ajv compiles, on every sample and its broken variants', async () => {
    const synthetic = join(temporary, 'synthetic');
    writeSyntheticCatalog(synthetic, { events: 30 });
    const samples = [
      ...(await catalogSamples(new URL('../../events', import.meta.url).pathname, 'events/')),
      ...(await catalogSamples(synthetic, 'synthetic')),
      ...confluentSamples(),
      ...generatedSamples(150),
    ];
    const random = seededRandom(7);
    const all = samples.flatMap((sample) => [sample, ...brokenVariants(sample, random)]);
    const wrong = all.filter(
      (sample) => certainlyCompiles(sample.schema, sample.dialect) && !ajvCompiles(sample),
    );
    expect(wrong.map((sample) => sample.name)).toEqual([]);
    // The shortcut must also apply where it matters: realistic catalogs skip ajv entirely.
    const skipped = (list: readonly Sample[]) =>
      list.filter((sample) => certainlyCompiles(sample.schema, sample.dialect)).length;
    const catalogs = samples.filter((sample) => /^(events\/|synthetic) /.test(sample.name));
    expect(skipped(catalogs)).toBe(catalogs.length);
  });

  it.each([
    ['draft-07 tuple items', { items: [{ type: 'string' }] }, 'draft-07', true],
    [
      '2020-12 tuple items (prefixItems in 2020-12)',
      { items: [{ type: 'string' }] },
      '2020-12',
      false,
    ],
    ['a pattern ajv cannot compile', { type: 'string', pattern: '(' }, 'draft-07', false],
    [
      'a recursive $ref',
      {
        definitions: { n: { properties: { next: { $ref: '#/definitions/n' } } } },
        $ref: '#/definitions/n',
      },
      'draft-07',
      true,
    ],
    ['a $ref to a missing definition', { $ref: '#/definitions/gone' }, 'draft-07', false],
    [
      'a $ref into a properties map',
      { properties: { a: {} }, $ref: '#/properties' },
      'draft-07',
      false,
    ],
    ['an empty enum', { enum: [] }, 'draft-07', false],
    ['then without if', { then: {} }, 'draft-07', false],
    ['a keyword it does not know', { unevaluatedProperties: false }, '2020-12', false],
  ] as const)('%s', (_name, schema, dialect, expected) => {
    expect(certainlyCompiles(schema, dialect)).toBe(expected);
    if (expected) expect(ajvCompiles({ name: _name, schema, dialect })).toBe(true);
  });
});
