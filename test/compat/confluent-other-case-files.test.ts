/**
 * Confluent's other published JSON Schema diff case files (2020-12 and combined schemas), run
 * unmodified: every verdict must match, and every change set except the few listed below with
 * the reason they differ.
 */
import { describe, expect, it } from 'vitest';
import { diffSchemas, type JsonSchema } from 'evgen';
import { wrapInAllOf } from './support/dialect-variants.js';
import { loadConfluentCases, type ConformanceCase } from './support/confluent-cases.js';
import { parseLenientJson } from './support/lenient-json.js';

interface CaseFile {
  readonly name: string;
  readonly size: number;
  /** Case index → why our change set differs from the file's (the verdict must still match). */
  readonly knownChangeSetDifferences: Readonly<Record<number, string>>;
}

const CASE_FILES: readonly CaseFile[] = [
  {
    name: 'diff-schema-examples-2020-12.json',
    size: 101,
    knownChangeSetDifferences: {
      // Confluent's 2020-12 translation at this file's commit dropped the root $id; later versions keep
      // it for parity with draft-07 (SchemaTranslator rootId). evgen keeps reporting it, as draft-07 does.
      1: 'root $id change in 2020-12: ID_CHANGED (always compatible) is reported; this older file expects none',
    },
  },
  { name: 'diff-combined-schema-examples.json', size: 28, knownChangeSetDifferences: {} },
  { name: 'diff-combined-schema-examples-2020-12.json', size: 18, knownChangeSetDifferences: {} },
];

/** The value at a `#/a/b` pointer fragment, or undefined. */
function at(schema: unknown, segments: readonly string[]): unknown {
  let current = schema;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * Older case files use the deprecated `PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL`; the Confluent
 * version the draft-07 fixture comes from reports it as OPTIONAL_/REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
 * depending on whether the new schema requires the property. Same verdict (incompatible under STRICT).
 */
function currentName(change: string, update: JsonSchema): string {
  const match = /^PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #\/(.*)$/.exec(change);
  if (match === null) return change;
  const segments = match[1]!.split('/');
  const property = segments.at(-1)!;
  const required = at(update, [...segments.slice(0, -2), 'required']);
  const isRequired = Array.isArray(required) && required.includes(property);
  return `${isRequired ? 'REQUIRED' : 'OPTIONAL'}_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/${match[1]!}`;
}

const changeSet = (changes: readonly { type: string; path: string }[]) =>
  changes.map((change) => `${change.type} ${change.path}`).sort();
const expectedChangeSet = (c: ConformanceCase) =>
  c.changes.map((change) => currentName(change, c.update_schema)).sort();

for (const file of CASE_FILES) {
  const cases = loadConfluentCases(file.name);

  describe(`Confluent ${file.name}`, () => {
    it(`has all ${file.size} cases`, () => {
      expect(cases).toHaveLength(file.size);
    });

    it.each(cases.map((c, index) => [index, c.description, c] as const))(
      '#%i %s',
      (index, _description, c) => {
        const result = diffSchemas(c.original_schema, c.update_schema);
        expect(result.compatible).toBe(c.compatible);
        if (file.knownChangeSetDifferences[index] === undefined)
          expect(changeSet(result.changes)).toEqual(expectedChangeSet(c));
        else expect(changeSet(result.changes)).not.toEqual(expectedChangeSet(c));
      },
    );

    it('matches every verdict and every change set not listed as a known difference', () => {
      let verdicts = 0;
      let changeSets = 0;
      for (const c of cases) {
        const result = diffSchemas(c.original_schema, c.update_schema);
        if (result.compatible === c.compatible) verdicts++;
        if (JSON.stringify(changeSet(result.changes)) === JSON.stringify(expectedChangeSet(c)))
          changeSets++;
      }
      const known = Object.keys(file.knownChangeSetDifferences).length;
      expect({ verdicts, changeSets }).toEqual({
        verdicts: file.size,
        changeSets: file.size - known,
      });
    });
  });
}

/** The schema as the only member of an allOf; `$schema` stays at the root, where it names the dialect. */
function wrapKeepingDialect(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object' || schema === null) return wrapInAllOf(schema) as JsonSchema;
  const { $schema, ...rest } = schema as Record<string, unknown>;
  const wrapped = wrapInAllOf(rest) as Record<string, unknown>;
  return $schema === undefined ? wrapped : { $schema, ...wrapped };
}

describe('the same cases inside a combined schema (allOf with one member)', () => {
  for (const file of CASE_FILES) {
    it(`keeps every verdict of ${file.name}`, () => {
      const wrong = loadConfluentCases(file.name)
        .filter(
          (c) =>
            diffSchemas(wrapKeepingDialect(c.original_schema), wrapKeepingDialect(c.update_schema))
              .compatible !== c.compatible,
        )
        .map((c) => c.description);
      expect(wrong).toEqual([]);
    });
  }
});

describe('lenient reading of the case files', () => {
  it('drops only trailing commas outside strings', () => {
    expect(parseLenientJson('{"a": ",}", "b": [1, 2,],}')).toEqual({ a: ',}', b: [1, 2] });
  });
});
