/**
 * JSON pointers (RFC 6901) as the runtime writes them into violations: the payload validator,
 * the number check and the transport limits all point at the value they are about.
 */

/** Escapes one JSON pointer segment: `a/b~c` → `a~1b~0c`. */
export function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
