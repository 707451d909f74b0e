/**
 * `enum` values must be distinct (draft-07's meta-schema requires it; 2020-12 says they should
 * be, and a repeated value means nothing). ajv checks uniqueness of an untyped array by comparing
 * every pair, which takes minutes for 100,000 values, so the loader's meta-schema leaves that
 * check out and this one does it in linear time: one canonical JSON string per value in a set.
 */
import type { CatalogProblem } from './catalog-error.js';
import { canonicalJson } from '../common/canonical-json.js';
import { walkSchema } from '../schema/walk.js';

export function duplicateEnumValues(schema: unknown, file: string): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  walkSchema(schema, (node, position) => {
    if (!Array.isArray(node.enum)) return;
    const first = new Map<string, number>();
    let repeated: { index: number; earlier: number; key: string } | undefined;
    let count = 0;
    for (const [index, value] of (node.enum as unknown[]).entries()) {
      const key = canonicalJson(value);
      const earlier = first.get(key);
      if (earlier === undefined) first.set(key, index);
      else {
        count++;
        repeated ??= { index, earlier, key };
      }
    }
    if (repeated === undefined) return;
    // One problem per enum, at its first repeat: a generated list can repeat thousands of values.
    problems.push({
      code: 'duplicate-enum-value',
      file,
      pointer: `${position.pointer}/enum/${repeated.index}`,
      message: `enum value ${truncate(repeated.key)} repeats the value at index ${repeated.earlier}${
        count > 1 ? ` (${count} repeated values in this enum)` : ''
      }`,
      hint: 'list each enum value once',
    });
  });
  return problems;
}

function truncate(text: string, max = 60): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
