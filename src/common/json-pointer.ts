/** JSON pointers (RFC 6901): building, reading and resolving them, in one place. */
import { isObject } from './json-value.js';

/** Escapes one pointer segment: `a/b~c` → `a~1b~0c`. */
export function pointerSegment(segment: string | number): string {
  const text = String(segment);
  // Most segments need no escaping: no regular expression for them (walks call this per node).
  if (!text.includes('~') && !text.includes('/')) return text;
  return text.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds a JSON pointer from segments: `['properties', 'a/b']` → `/properties/a~1b`. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((segment) => `/${pointerSegment(segment)}`).join('');
}

/** Undoes `pointerSegment`: `a~1b~0c` → `a/b~c`. */
export function unescapeSegment(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** `/properties/a~1b` → `['properties', 'a/b']`; undefined when it is not a pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer.slice(1).split('/').map(unescapeSegment);
}

/**
 * Segments of a `$ref` fragment (`#/definitions/a%20b` → `['definitions', 'a b']`): the fragment is
 * URI-encoded, then pointer-escaped. Undefined when it is not a local JSON pointer reference.
 */
export function parseRefPointer(ref: string): string[] | undefined {
  if (!ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  return parsePointer(fragment);
}

/** The value a pointer designates inside `document`, or `{ found: false }`. */
export function resolvePointer(
  document: unknown,
  pointer: string,
): { found: true; value: unknown } | { found: false } {
  const segments = parsePointer(pointer);
  return segments === undefined ? { found: false } : resolveSegments(document, segments);
}

/** The value at `segments` inside `document`, or `{ found: false }`. */
export function resolveSegments(
  document: unknown,
  segments: readonly string[],
): { found: true; value: unknown } | { found: false } {
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
