/**
 * Confluent conformance: every case of Confluent Schema Registry's own JSON Schema diff test data
 * must get Confluent's verdict (and the same change set), as written (draft-07), rewritten in
 * 2020-12 spelling, and wrapped in a combined schema.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { diffSchemas, type JsonSchema } from 'evgen';
import { toDraft2020, wrapInAllOf } from './support/dialect-variants.js';

interface ConformanceCase {
  readonly description: string;
  readonly original_schema: JsonSchema;
  readonly update_schema: JsonSchema;
  readonly changes: readonly string[];
  readonly compatible: boolean;
}

const cases = JSON.parse(
  readFileSync(new URL('../fixtures/confluent/diff-schema-examples.json', import.meta.url), 'utf8'),
) as ConformanceCase[];

const changeSet = (changes: readonly { type: string; path: string }[]) => changes.map((change) => `${change.type} ${change.path}`).sort();

describe('Confluent diff-schema-examples (draft-07, as published)', () => {
  it('has all 104 cases', () => {
    expect(cases).toHaveLength(104);
  });

  it.each(cases.map((c, index) => [index, c.description, c] as const))('#%i %s', (_index, _description, c) => {
    const result = diffSchemas(c.original_schema, c.update_schema);
    expect(result.compatible).toBe(c.compatible);
    expect(changeSet(result.changes)).toEqual([...c.changes].sort());
  });

  it('matches every verdict and every change set', () => {
    let verdicts = 0;
    let changeSets = 0;
    for (const c of cases) {
      const result = diffSchemas(c.original_schema, c.update_schema);
      if (result.compatible === c.compatible) verdicts++;
      if (JSON.stringify(changeSet(result.changes)) === JSON.stringify([...c.changes].sort())) changeSets++;
    }
    expect({ verdicts, changeSets }).toEqual({ verdicts: 104, changeSets: 104 });
  });
});

describe('the same cases in 2020-12 spelling', () => {
  it.each(cases.map((c, index) => [index, c.description, c] as const))('#%i %s', (_index, _description, c) => {
    const result = diffSchemas(toDraft2020(c.original_schema) as JsonSchema, toDraft2020(c.update_schema) as JsonSchema);
    expect(result.compatible).toBe(c.compatible);
    // Same differences; tuple and dependency paths name the 2020-12 keywords.
    const renamed = [...c.changes]
      .map((change) =>
        change
          .replace(/#\/items\/(\d)/, (match, index: string) => (isTuple(c) ? `#/prefixItems/${index}` : match))
          .replace('#/additionalItems', '#/items')
          .replace(/#\/dependencies\//, dependencyKeyword(c, change)),
      )
      .sort();
    expect(changeSet(result.changes)).toEqual(renamed);
  });
});

describe('the same cases inside a combined schema (allOf with one member)', () => {
  it.each(cases.map((c, index) => [index, c.description, c] as const))('#%i %s', (_index, _description, c) => {
    const result = diffSchemas(wrapInAllOf(c.original_schema) as JsonSchema, wrapInAllOf(c.update_schema) as JsonSchema);
    expect(result.compatible).toBe(c.compatible);
  });
});

function isTuple(c: ConformanceCase): boolean {
  const items = (schema: JsonSchema) => typeof schema === 'object' && Array.isArray(schema['items']);
  return items(c.original_schema) || items(c.update_schema);
}

/** `#/dependencies/x` → `#/dependentRequired/x` or `#/dependentSchemas/x`, by what x depends on. */
function dependencyKeyword(c: ConformanceCase, change: string): string {
  const key = change.split('/').pop()!;
  for (const schema of [c.update_schema, c.original_schema]) {
    const dependencies = typeof schema === 'object' ? (schema['dependencies'] as Record<string, unknown> | undefined) : undefined;
    if (dependencies !== undefined && key in dependencies) return Array.isArray(dependencies[key]) ? '#/dependentRequired/' : '#/dependentSchemas/';
  }
  return '#/dependencies/';
}
