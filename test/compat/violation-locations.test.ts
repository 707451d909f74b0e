/**
 * Every violation points at something that exists: its JSON pointer resolves in the file it names,
 * even when the difference is about what only the other version has (a removed property) or lies
 * behind a `$ref`. Checked on every Confluent fixture pair (as v1 → v2 of one event, FULL, each
 * policy) and on edits of the example catalog through the CLI.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCatalog, type CompatibilityPolicy, type JsonSchema } from 'evgen';
import { resolvePointer } from '../../src/common/json-pointer.js';
import { locatePath } from '../../src/compat/locate-path.js';
import { loadConfluentCases } from './support/confluent-cases.js';
import { catalogOf, eventWith } from './support/hand-catalog.js';
import { evgen, exampleCopy } from './support/cli-run.js';

const FIXTURES = [
  'diff-schema-examples.json',
  'diff-schema-examples-2020-12.json',
  'diff-combined-schema-examples.json',
  'diff-combined-schema-examples-2020-12.json',
];
const POLICIES: readonly CompatibilityPolicy[] = ['confluent', 'confluent-lenient', 'evgen'];

describe('violation pointers resolve in the file they name', () => {
  it('on every Confluent fixture pair, under every policy', () => {
    let violations = 0;
    let elsewhere = 0;
    const unresolved: string[] = [];
    for (const fixture of FIXTURES) {
      for (const [index, testCase] of loadConfluentCases(fixture).entries()) {
        for (const policy of POLICIES) {
          const event = eventWith([testCase.original_schema, testCase.update_schema], {
            mode: 'FULL',
            policy,
          });
          const report = checkCatalog(catalogOf(event));
          for (const violation of report.violations) {
            violations++;
            const version = event.versions.find((candidate) =>
              violation.file.endsWith(`/${candidate.file}`),
            );
            if (version === undefined || !resolvePointer(version.schema, violation.pointer).found)
              unresolved.push(
                `${fixture}#${index} ${policy}: ${violation.code} ${violation.file}#${violation.pointer}`,
              );
            if (!locatePath(version?.schema, violation.path).exact) elsewhere++;
          }
        }
      }
    }
    expect(unresolved).toEqual([]);
    // The fixtures exercise both kinds: places in the new version, and places only the old one has.
    expect(violations).toBeGreaterThan(300);
    expect(elsewhere).toBeGreaterThan(20);
  });

  it('on edits of the example catalog: a removed required property, a change behind a $ref', async () => {
    const copy = await exampleCopy();
    try {
      const dir = join(copy.events, 'order', 'OrderCreated');
      const v2 = JSON.parse(await readFile(join(dir, 'v2.schema.json'), 'utf8')) as {
        properties: Record<string, JsonSchema>;
        required: string[];
      };
      delete v2.properties['customerId'];
      v2.required = v2.required.filter((name) => name !== 'customerId');
      v2.properties['channel'] = { type: 'string', enum: ['web', 'mobile'] };
      v2.properties['total'] = { $ref: '../../_common/money-strict.schema.json' };
      await writeFile(join(dir, 'v3.schema.json'), JSON.stringify(v2, null, 2));
      const money = JSON.parse(
        await readFile(join(copy.events, '_common', 'money.schema.json'), 'utf8'),
      ) as { properties: Record<string, Record<string, unknown>> };
      for (const property of Object.values(money.properties)) property['maxLength'] = 3;
      await writeFile(
        join(copy.events, '_common', 'money-strict.schema.json'),
        JSON.stringify(money, null, 2),
      );

      const result = await evgen('check', '--events', copy.events, '--format', 'json');
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as {
        violations: { file: string; pointer: string; code: string; message: string }[];
      };
      expect(report.violations.length).toBeGreaterThanOrEqual(3);
      for (const violation of report.violations) {
        const schema = JSON.parse(await readFile(violation.file, 'utf8')) as unknown;
        expect(resolvePointer(schema, violation.pointer), violation.pointer).toMatchObject({
          found: true,
        });
      }
      expect(report.violations).toContainEqual(
        expect.objectContaining({
          pointer: '/properties',
          code: 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
          message:
            'v3 removes required property "customerId"; consumers still on v1 require it (forward; named as Confluent does, with v1 as the reader)',
        }),
      );
    } finally {
      await copy.dispose();
    }
  });
});

describe('locatePath', () => {
  const schema = {
    type: 'object',
    properties: {
      a: { $ref: '#/definitions/a' },
      t: { type: 'array', prefixItems: [{ type: 'string' }], items: false },
    },
    required: ['a', 'b'],
    definitions: { a: { type: 'object', properties: { x: { type: 'string' } } } },
  };

  it('follows local references, names required entries by index, reads draft-07 tuple names', () => {
    expect(locatePath(schema, '#/properties/a/properties/x')).toEqual({
      pointer: '/definitions/a/properties/x',
      exact: true,
    });
    expect(locatePath(schema, '#/required/b')).toEqual({ pointer: '/required/1', exact: true });
    expect(locatePath(schema, '#/properties/t/items/0')).toEqual({
      pointer: '/properties/t/prefixItems/0',
      exact: true,
    });
    expect(locatePath(schema, '#/properties/t/additionalItems')).toEqual({
      pointer: '/properties/t/items',
      exact: true,
    });
    expect(locatePath(schema, '#/')).toEqual({ pointer: '', exact: true });
  });

  it('stops at the deepest existing place', () => {
    expect(locatePath(schema, '#/properties/gone/type')).toEqual({
      pointer: '/properties',
      exact: false,
    });
    expect(locatePath(schema, '#/properties/a/properties/y')).toEqual({
      pointer: '/definitions/a/properties',
      exact: false,
    });
  });

  it('ends on a ring of references', () => {
    const ring = {
      definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } },
    };
    expect(locatePath(ring, '#/definitions/a/properties/x').exact).toBe(false);
  });
});
