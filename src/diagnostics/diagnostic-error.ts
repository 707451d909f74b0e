/**
 * An error that carries diagnostics. Catalog problems, generator errors and output conflicts all
 * throw one, so every command prints them the same way (`file#pointer: code: message` + hint)
 * and exits 2, instead of each error class printing its own free-form message.
 */
import type { Diagnostic } from './diagnostic.js';
import { formatDiagnosticText } from './format.js';

export class DiagnosticError extends Error {
  constructor(
    readonly problems: readonly Diagnostic[],
    options?: { cause?: unknown },
  ) {
    super(problems.map((problem) => formatDiagnosticText(problem)).join('\n'), options);
    this.name = 'DiagnosticError';
  }
}
