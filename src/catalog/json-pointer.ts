/** Reading JSON pointers (RFC 6901), the counterpart of `jsonPointer` in catalog-error.ts. */

/** `/properties/a~1b` → `['properties', 'a/b']`; undefined when it is not a pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value a pointer designates inside `document`, or `{ found: false }`. */
export function resolvePointer(
  document: unknown,
  pointer: string,
): { found: true; value: unknown } | { found: false } {
  const segments = parsePointer(pointer);
  if (segments === undefined) return { found: false };
  let value: unknown = document;
  for (const segment of segments) {
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment) || Number(segment) >= value.length)
        return { found: false };
      value = value[Number(segment)];
    } else if (isObject(value) && Object.prototype.hasOwnProperty.call(value, segment)) {
      value = value[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
