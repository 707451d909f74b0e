/**
 * One shape for everything evgen tells a person about their files: catalog problems (bad input,
 * exit 2), compatibility findings (exit 1) and generator errors. Where (file + JSON pointer), a
 * stable code, what is wrong, what to do. Printed by the formatters in `format.ts`.
 */
import { compareStrings } from '../common/json-value.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  /** Path relative to the working folder (or absolute when outside it), `/`-separated. */
  readonly file: string;
  /** JSON pointer inside the file; "" means the whole file. */
  readonly pointer: string;
  /**
   * Stable identifier of the rule: kebab-case for catalog problems (`version-gap`), Confluent's
   * difference type for compatibility findings (`TYPE_CHANGED`).
   */
  readonly code: string;
  readonly message: string;
  /** One line on how to fix it. */
  readonly hint: string;
  /** Absent means `error`: every problem stops the command unless it says otherwise. */
  readonly severity?: Severity;
}

export function severityOf(diagnostic: Diagnostic): Severity {
  return diagnostic.severity ?? 'error';
}

/** File, then pointer, then code, then message. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    compareStrings(a.file, b.file) ||
    compareStrings(a.pointer, b.pointer) ||
    compareStrings(a.code, b.code) ||
    compareStrings(a.message, b.message)
  );
}

/** Re-exported where diagnostics are made: the one sanitizer of printed text. */
export { printable } from './printable.js';
