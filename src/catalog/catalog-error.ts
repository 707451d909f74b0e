/**
 * What is wrong with a catalog, said so a person can fix it: which file, where in it (a JSON
 * pointer), what is wrong, and what to do. The CLI prints every problem and exits with 2.
 */

export interface CatalogProblem {
  /** Stable kebab-case identifier of the rule, e.g. `version-gap`. */
  readonly code: string;
  /** Path relative to the working folder (or absolute when outside it), `/`-separated. */
  readonly file: string;
  /** JSON pointer inside the file; "" means the whole file. */
  readonly pointer: string;
  readonly message: string;
  /** One line on how to fix it. */
  readonly hint: string;
}

export class CatalogError extends Error {
  constructor(readonly problems: readonly CatalogProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'CatalogError';
  }
}

/** `file#pointer: message (hint)` — the one format every command prints problems in. */
export function formatProblem(problem: CatalogProblem): string {
  const where = problem.pointer === '' ? problem.file : `${problem.file}#${problem.pointer}`;
  return `${where}: ${problem.message}\n  hint: ${problem.hint}`;
}

/** Escapes one JSON pointer segment (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds a JSON pointer from segments: `['properties', 'a/b']` → `/properties/a~1b`. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((segment) => `/${pointerSegment(segment)}`).join('');
}
