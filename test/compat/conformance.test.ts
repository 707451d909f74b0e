/**
 * Confluent conformance: every case of Confluent Schema Registry's own JSON Schema diff test data
 * must get Confluent's verdict (and the same change set), as written (draft-07), rewritten in
 * 2020-12 spelling, and wrapped in a combined schema.
 */
import { describe, expect, it } from 'vitest';
import { diffSchemas, type JsonSchema } from 'evgen';
import { toDraft2020, wrapInAllOf } from './support/dialect-variants.js';
import { loadConfluentCases } from './support/confluent-cases.js';

const cases = loadConfluentCases('diff-schema-examples.json');

const changeSet = (changes: readonly { type: string; path: string }[]) =>
  changes.map((change) => `${change.type} ${change.path}`).sort();

describe('Confluent diff-schema-examples (draft-07, as published)', () => {
  it('has all 104 cases', () => {
    expect(cases).toHaveLength(104);
  });

  it.each(cases.map((c, index) => [index, c.description, c] as const))(
    '#%i %s',
    (_index, _description, c) => {
      const result = diffSchemas(c.original_schema, c.update_schema);
      expect(result.compatible).toBe(c.compatible);
      expect(changeSet(result.changes)).toEqual([...c.changes].sort());
    },
  );

  it('matches every verdict and every change set', () => {
    let verdicts = 0;
    let changeSets = 0;
    for (const c of cases) {
      const result = diffSchemas(c.original_schema, c.update_schema);
      if (result.compatible === c.compatible) verdicts++;
      if (JSON.stringify(changeSet(result.changes)) === JSON.stringify([...c.changes].sort()))
        changeSets++;
    }
    expect({ verdicts, changeSets }).toEqual({ verdicts: 104, changeSets: 104 });
  });
});

/**
 * Where Confluent's own 2020-12 case file (diff-schema-examples-2020-12.json, same description)
 * expects a different change set for the same schemas: its 2020-12 loader reads an empty
 * `properties` object as no constraint, so `{"properties": {}}` is the empty schema there.
 */
const CHANGES_IN_2020_12: Readonly<Record<number, readonly string[]>> = { 56: [], 59: [], 79: [] };

describe('the same cases in 2020-12 spelling', () => {
  it.each(cases.map((c, index) => [index, c.description, c] as const))(
    '#%i %s',
    (index, _description, c) => {
      const result = diffSchemas(
        toDraft2020(c.original_schema) as JsonSchema,
        toDraft2020(c.update_schema) as JsonSchema,
      );
      expect(result.compatible).toBe(c.compatible);
      // Same differences at the same paths: Confluent names 2020-12 positions and rests like draft-07.
      expect(changeSet(result.changes)).toEqual(
        [...(CHANGES_IN_2020_12[index] ?? c.changes)].sort(),
      );
    },
  );

  it("takes each 2020-12 exception from Confluent's published 2020-12 cases", () => {
    const published = loadConfluentCases('diff-schema-examples-2020-12.json');
    for (const [index, changes] of Object.entries(CHANGES_IN_2020_12)) {
      const draft07 = cases[Number(index)]!;
      const twin = published.filter((c) => c.description === draft07.description);
      expect(twin).toHaveLength(1);
      expect(twin[0]!.original_schema).toEqual(toDraft2020(draft07.original_schema));
      expect(twin[0]!.update_schema).toEqual(toDraft2020(draft07.update_schema));
      expect([...twin[0]!.changes].sort()).toEqual([...changes].sort());
      expect(twin[0]!.changes).not.toEqual(draft07.changes);
    }
  });
});

describe('the same cases inside a combined schema (allOf with one member)', () => {
  it.each(cases.map((c, index) => [index, c.description, c] as const))(
    '#%i %s',
    (_index, _description, c) => {
      const result = diffSchemas(
        wrapInAllOf(c.original_schema) as JsonSchema,
        wrapInAllOf(c.update_schema) as JsonSchema,
      );
      expect(result.compatible).toBe(c.compatible);
    },
  );
});
