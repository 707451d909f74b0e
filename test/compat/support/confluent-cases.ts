/** Confluent's published diff test cases (test/fixtures/confluent/), read the same way by every test. */
import { readFileSync } from 'node:fs';
import type { JsonSchema } from 'evgen';
import { parseLenientJson } from './lenient-json.js';

export interface ConformanceCase {
  readonly description: string;
  readonly original_schema: JsonSchema;
  readonly update_schema: JsonSchema;
  readonly changes: readonly string[];
  readonly compatible: boolean;
}

/** The cases of one file; lenient because one published file has a trailing comma. */
export function loadConfluentCases(fileName: string): ConformanceCase[] {
  const text = readFileSync(
    new URL(`../../fixtures/confluent/${fileName}`, import.meta.url),
    'utf8',
  );
  return parseLenientJson(text) as ConformanceCase[];
}
