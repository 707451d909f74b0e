/** Diagnostics: the one shape of everything evgen reports about input, and its formatters. */
export { compareDiagnostics, severityOf, type Diagnostic, type Severity } from './diagnostic.js';
export { DiagnosticError } from './diagnostic-error.js';
export { printable, printableJson, printed } from './printable.js';
export {
  diagnosticJson,
  DIAGNOSTIC_FORMATS,
  escapeGithubData,
  escapeGithubProperty,
  formatDiagnosticGithub,
  formatDiagnostics,
  formatDiagnosticText,
  locationOf,
  type DiagnosticFormat,
} from './format.js';
