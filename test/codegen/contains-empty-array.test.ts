/**
 * Generated writer and reader validators reject an empty array where `contains` asks for an
 * item, also when the `contains` schema applies to several arrays in a loop: plain ajv 8.20
 * accepts `[["x"], []]` for `{"items": {"contains": …}}` once the first array passed, so the
 * validators target adds the implied `minItems` before compiling.
 */
import { runTarget } from '../support/run-target.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { PayloadValidator } from 'evgen/runtime';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { validatorsTarget } from '../../src/codegen/targets/validators.js';
import { withContainsItemFloor } from '../../src/codegen/targets/contains-item-floor.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const EVENT_JSON = {
  description: 'Arrays that must contain a string.',
  aggregate: 'Shelf',
  aggregateId: 'shelfId',
  kafka: { topic: 'shelf.events' },
  rabbitmq: { exchange: 'shelf', routingKey: 'shelf.tagged' },
};

const HAS_STRING = { type: 'array', contains: { type: 'string' } };

function schema(dialect: 'draft-07' | '2020-12') {
  return {
    ...(dialect === '2020-12' ? { $schema: 'https://json-schema.org/draft/2020-12/schema' } : {}),
    type: 'object',
    properties: {
      shelfId: { type: 'string' },
      rows: { type: 'array', items: HAS_STRING },
      byName: { type: 'object', additionalProperties: HAS_STRING },
      ...(dialect === '2020-12'
        ? {
            // minContains 0: an empty array (or one without strings) is valid.
            optional: { type: 'array', items: { ...HAS_STRING, minContains: 0 } },
            // minContains 2 over minItems 1: two strings needed.
            pairs: { type: 'array', items: { ...HAS_STRING, minContains: 2, minItems: 1 } },
          }
        : {}),
    },
    required: ['shelfId'],
  };
}

describe('validators reject an empty array under contains in a loop', () => {
  const scratch = join(REPO, 'tmp', `contains-empty-array-${randomBytes(4).toString('hex')}`);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const dialect of ['draft-07', '2020-12'] as const) {
    it(`items and additionalProperties with contains, writer and reader (${dialect})`, async () => {
      const root = join(scratch, dialect);
      const events = join(root, 'events', 'shelf', 'ShelfTagged');
      mkdirSync(events, { recursive: true });
      writeFileSync(join(events, 'event.json'), JSON.stringify(EVENT_JSON));
      writeFileSync(join(events, 'v1.schema.json'), JSON.stringify(schema(dialect)));
      const catalog = await loadCatalog(join(root, 'events'));
      const files = await runTarget(validatorsTarget, { catalog, runtimeImport: 'evgen/runtime' });
      for (const file of files) {
        mkdirSync(dirname(join(root, 'out', file.path)), { recursive: true });
        writeFileSync(join(root, 'out', file.path), file.content);
      }
      const mod = (await import(
        join(root, 'out', 'shelf', 'shelf-tagged', 'validators.js')
      )) as Record<string, PayloadValidator<unknown>>;
      const write = mod.validateShelfTaggedV1Payload!;
      const read = mod.readShelfTaggedV1Payload!;
      for (const check of [write, read]) {
        const ok = (extra: object) => check({ shelfId: 's', ...extra }).ok;
        expect(ok({ rows: [['x'], ['y', 1]], byName: { a: ['x'], b: [2, 'y'] } })).toBe(true);
        expect(ok({ rows: [] })).toBe(true);
        expect(ok({ rows: [['x'], []] })).toBe(false);
        expect(ok({ rows: [['x'], [1]] })).toBe(false);
        expect(ok({ rows: [[]] })).toBe(false);
        expect(ok({ byName: { a: ['x'], b: [] } })).toBe(false);
        expect(ok({ byName: { a: ['x'], b: [1] } })).toBe(false);
        if (dialect === '2020-12') {
          expect(ok({ optional: [['x'], [], [1]] })).toBe(true);
          expect(
            ok({
              pairs: [
                ['x', 'y'],
                ['z', 1, 'w'],
              ],
            }),
          ).toBe(true);
          expect(ok({ pairs: [['x', 'y'], []] })).toBe(false);
          expect(ok({ pairs: [['x', 'y'], ['z']] })).toBe(false);
        }
      }
    });
  }

  it('adds the implied minItems to a copy, leaving the schema as written', () => {
    const input = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      items: { contains: { type: 'string' } },
      $defs: {
        none: { contains: {}, minContains: 0 },
        more: { contains: {}, minContains: 3, minItems: 2 },
        enough: { contains: {}, minItems: 4 },
      },
      // Data, not a schema: never rewritten.
      const: { contains: {} },
    };
    const before = structuredClone(input);
    expect(withContainsItemFloor(input, '2020-12')).toEqual({
      ...input,
      items: { contains: { type: 'string' }, minItems: 1 },
      $defs: {
        none: { contains: {}, minContains: 0 },
        more: { contains: {}, minContains: 3, minItems: 3 },
        enough: { contains: {}, minItems: 4 },
      },
    });
    expect(input).toEqual(before);
    // draft-07 has no minContains: contains alone asks for one item.
    expect(withContainsItemFloor({ contains: {}, minContains: 0 }, 'draft-07')).toEqual({
      contains: {},
      minContains: 0,
      minItems: 1,
    });
  });
});
