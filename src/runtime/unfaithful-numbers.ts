/**
 * Numbers a payload cannot carry to its consumers unchanged. Every consumer decodes message bodies
 * with `decodeMessageBody`, which refuses an integer literal beyond ±(2^53 − 1) (JavaScript would
 * round it) and so dead-letters the event; PostgreSQL's jsonb also prints every such number as an
 * integer literal, whatever form the writer gave it. NaN and ±Infinity have no JSON form at all
 * (JSON.stringify writes `null`). A writer that accepted them would commit an event no consumer
 * can handle: producers refuse them instead, before anything is written. Integers of any size
 * travel faithfully as strings of digits, which is what a schema declares to carry them.
 */
import { isLargeNumber } from './decode-message-body.js';
import type { Violation } from './errors.js';
import { escapePointerSegment } from './json-pointer.js';

function problem(value: number): string | undefined {
  if (Number.isNaN(value) || !Number.isFinite(value)) {
    return `is ${String(value)}, which JSON cannot carry (it would be written as null)`;
  }
  // The decoder's own test: what it would refuse, the writer refuses.
  if (isLargeNumber(value)) {
    return `is ${String(value)}, beyond ±(2^53 − 1): consumers cannot read it without rounding and would dead-letter the event; carry such integers as strings of digits (declare the property as a string in the schema)`;
  }
  return undefined;
}

/**
 * Every number in `value` (a parsed JSON-like value) that would not reach consumers as written,
 * with JSON pointers relative to `value`. Objects are walked by their own enumerable keys, as
 * JSON.stringify does; a `toJSON` method is not called (payloads are plain data).
 */
export function unfaithfulNumbers(value: unknown, pointer = ''): Violation[] {
  // Every event a writer makes passes here and almost none holds such a number: a walk that
  // builds no pointer strings answers first (building one per node made envelope constructors
  // ~1.8× slower), and only a payload with a finding is walked again for its pointers.
  if (!holdsUnfaithfulNumber(value, 0)) return [];
  const violations: Violation[] = [];
  const visit = (item: unknown, at: string, depth: number) => {
    if (typeof item === 'number') {
      const message = problem(item);
      if (message !== undefined) violations.push({ pointer: at, keyword: 'type', message });
      return;
    }
    // The schema validator has already bounded nesting for generated payloads; this bound only
    // keeps a cyclic or absurdly deep value from overflowing the stack.
    if (typeof item !== 'object' || item === null || depth > 256) return;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) visit(item[i], `${at}/${i}`, depth + 1);
      return;
    }
    for (const key of Object.keys(item)) {
      visit(
        (item as Record<string, unknown>)[key],
        `${at}/${escapePointerSegment(key)}`,
        depth + 1,
      );
    }
  };
  visit(value, pointer, 0);
  return violations;
}

function holdsUnfaithfulNumber(item: unknown, depth: number): boolean {
  if (typeof item === 'number') return problem(item) !== undefined;
  if (typeof item !== 'object' || item === null || depth > 256) return false;
  if (Array.isArray(item)) {
    for (let i = 0; i < item.length; i++)
      if (holdsUnfaithfulNumber(item[i], depth + 1)) return true;
    return false;
  }
  for (const key of Object.keys(item)) {
    if (holdsUnfaithfulNumber((item as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}
