/** Diagnostics: the one shape of everything evgen reports about input, and its formatters. */
export {
  compareDiagnostics,
  printable,
  severityOf,
  type Diagnostic,
  type Severity,
} from './diagnostic.js';
export { DiagnosticError } from './diagnostic-error.js';
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
