/** Plain JSON values: the one `isObject` test and the one string order used across evgen. */

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Orders strings by UTF-16 code units, like `Array.prototype.sort()` without a comparator. Output
 * must not depend on the machine's locale, so `localeCompare` is never used for ordering.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
