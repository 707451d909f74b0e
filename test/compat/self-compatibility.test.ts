/**
 * An unchanged schema is compatible with itself under every policy and mode. Under policy `evgen`
 * the writer view (closed) is compared with the reader view (open), so this is not trivial: the
 * closing may add keywords beside a combiner that the reader view does not have.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkReadable, type JsonSchema } from 'evgen';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { COMPATIBILITY_POLICIES } from '../../src/catalog/model.js';
import { loadConfluentCases } from './support/confluent-cases.js';

const objectBranch = (name: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string' } },
  required: [name],
});

/** Combiners beside other keywords: where the writer view adds keywords the reader view lacks. */
const HAND_WRITTEN: Record<string, JsonSchema> = {
  'anyOf of two object branches in a property': {
    type: 'object',
    properties: { x: { anyOf: [objectBranch('a'), objectBranch('b')] } },
  },
  'oneOf of two object branches at the root': { oneOf: [objectBranch('a'), objectBranch('b')] },
  'type object beside oneOf': { type: 'object', oneOf: [objectBranch('a'), objectBranch('b')] },
  'anyOf and oneOf together': {
    anyOf: [objectBranch('a'), objectBranch('b')],
    oneOf: [objectBranch('c'), objectBranch('d')],
  },
  'properties beside anyOf': {
    properties: { id: { type: 'string' } },
    anyOf: [objectBranch('a'), objectBranch('b')],
  },
  'allOf of object branches': { allOf: [objectBranch('a'), objectBranch('b')] },
  'if/then/else on an object': {
    type: 'object',
    properties: { kind: { type: 'string' } },
    if: { properties: { kind: { const: 'x' } } },
    then: objectBranch('a'),
    else: objectBranch('b'),
  },
  'anyOf of object branches, 2020-12': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { x: { anyOf: [objectBranch('a'), objectBranch('b')] } },
  },
  'oneOf beside $ref, 2020-12': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: { base: objectBranch('id') },
    $ref: '#/$defs/base',
    oneOf: [objectBranch('a'), objectBranch('b')],
  },
};

async function catalogSchemas(dir: string): Promise<[string, JsonSchema][]> {
  const catalog = await loadCatalog(fileURLToPath(new URL(dir, import.meta.url)));
  return catalog.events.flatMap((event) =>
    event.versions.map(
      (version) => [`${dir}${version.file}`, version.bundled] as [string, JsonSchema],
    ),
  );
}

async function allSchemas(): Promise<[string, JsonSchema][]> {
  const schemas: [string, JsonSchema][] = Object.entries(HAND_WRITTEN);
  for (const dir of [
    '../../events/',
    '../golden/common-ref/events/',
    '../golden/dialect-2020/events/',
    '../golden/injection/events/',
    '../golden/injection-keys/events/',
  ])
    schemas.push(...(await catalogSchemas(dir)));
  for (const file of [
    'diff-schema-examples.json',
    'diff-schema-examples-2020-12.json',
    'diff-combined-schema-examples.json',
    'diff-combined-schema-examples-2020-12.json',
  ])
    loadConfluentCases(file).forEach((c, index) => {
      schemas.push([`${file} #${index} original`, c.original_schema]);
      schemas.push([`${file} #${index} update`, c.update_schema]);
    });
  return schemas;
}

describe('an unchanged schema is compatible with itself', () => {
  it('under every policy and mode (events/, golden catalogs, Confluent fixtures, combiners)', async () => {
    const schemas = await allSchemas();
    expect(schemas.length).toBeGreaterThan(400);
    const failures: string[] = [];
    for (const [name, schema] of schemas) {
      for (const policy of COMPATIBILITY_POLICIES) {
        // Every mode checks backward, forward or both; for s → s both are this one pair.
        const result = checkReadable(schema, schema, policy);
        if (!result.compatible)
          failures.push(
            `${name} (${policy}): ${result.incompatibleChanges
              .map((change) => `${change.type} ${change.path}`)
              .join(', ')}`,
          );
      }
    }
    expect(failures).toEqual([]);
  });
});
