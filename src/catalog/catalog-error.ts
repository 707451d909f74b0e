/**
 * What is wrong with a catalog, said so a person can fix it: which file, where in it (a JSON
 * pointer), what is wrong, and what to do. The CLI prints every problem and exits with 2.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { DiagnosticError } from '../diagnostics/diagnostic-error.js';
import { formatDiagnosticText } from '../diagnostics/format.js';

/** A catalog problem is a diagnostic (file, pointer, kebab-case code, message, hint). */
export type CatalogProblem = Diagnostic;

/** Bad input: the catalog, the config file or a command-line option (exit 2). */
export class CatalogError extends DiagnosticError {
  constructor(problems: readonly CatalogProblem[]) {
    super(problems);
    this.name = 'CatalogError';
  }
}

/** `file#pointer: code: message` + hint — the one text format every command prints problems in. */
export function formatProblem(problem: CatalogProblem): string {
  return formatDiagnosticText(problem);
}
