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
    // Same differences at the same paths: Confluent names 2020-12 positions and rests like draft-07.
    expect(changeSet(result.changes)).toEqual([...c.changes].sort());
  });
});

describe('the same cases inside a combined schema (allOf with one member)', () => {
  it.each(cases.map((c, index) => [index, c.description, c] as const))('#%i %s', (_index, _description, c) => {
    const result = diffSchemas(wrapInAllOf(c.original_schema) as JsonSchema, wrapInAllOf(c.update_schema) as JsonSchema);
    expect(result.compatible).toBe(c.compatible);
  });
});
