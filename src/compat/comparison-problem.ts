/**
 * Why a comparison could not give a verdict: a schema too complex to compare within the
 * engine's budget, or a schema the engine cannot read. Both are bad input (exit 2), reported
 * as a diagnostic at the place that caused it.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';

/** Thrown by the engine: a budget ran out at `path` (a `#/…` fragment of the update side). */
export class ComparisonLimitError extends Error {
  constructor(
    readonly what: string,
    readonly limit: number,
    readonly path: string,
  ) {
    super(`too complex to compare: ${what} (limit ${limit}) at ${path}`);
    this.name = 'ComparisonLimitError';
  }
}

/** A problem found while checking a catalog, already located in a file. */
export class ComparisonProblem extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(`${diagnostic.file}#${diagnostic.pointer}: ${diagnostic.message}`);
    this.name = 'ComparisonProblem';
  }
}
