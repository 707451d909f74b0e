/**
 * The formatters every command prints diagnostics with: `text` for people, `json` for machines
 * (fixed key order), `github` for GitHub Actions workflow annotations. Every field passes through
 * `printable` first, in every format, so text from a schema cannot forge lines or annotations.
 */
import { printable, severityOf, type Diagnostic } from './diagnostic.js';
import { printableJson } from './printable.js';

export const DIAGNOSTIC_FORMATS = ['text', 'json', 'github'] as const;
export type DiagnosticFormat = (typeof DIAGNOSTIC_FORMATS)[number];

/** `file#/pointer` (`file` alone for the whole file). */
export function locationOf(diagnostic: Diagnostic): string {
  const file = printable(diagnostic.file);
  return diagnostic.pointer === '' ? file : `${file}#${printable(diagnostic.pointer)}`;
}

/**
 * `file#/pointer: code: message` and an indented `hint:` line (warnings say `warning:` first).
 * `extra` lines (already printable) follow the hint, indented the same way.
 */
export function formatDiagnosticText(
  diagnostic: Diagnostic,
  extra: readonly string[] = [],
): string {
  const severity = severityOf(diagnostic) === 'warning' ? 'warning: ' : '';
  return [
    `${locationOf(diagnostic)}: ${severity}${printable(diagnostic.code)}: ${printable(diagnostic.message)}`,
    `  hint: ${printable(diagnostic.hint)}`,
    ...extra.map((line) => `  ${line}`),
  ].join('\n');
}

/** The diagnostic as a plain object with fixed keys (for JSON reports). */
export function diagnosticJson(diagnostic: Diagnostic): {
  severity: string;
  code: string;
  file: string;
  pointer: string;
  message: string;
  hint: string;
} {
  return {
    severity: severityOf(diagnostic),
    code: printable(diagnostic.code),
    file: printable(diagnostic.file),
    pointer: printable(diagnostic.pointer),
    message: printable(diagnostic.message),
    hint: printable(diagnostic.hint),
  };
}

// GitHub workflow command escaping: data escapes %, CR and LF; property values also `:` and `,`.
// `printable` already turned CR/LF into visible escapes; escaping again keeps the rule whole.
export const escapeGithubData = (text: string): string =>
  text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
export const escapeGithubProperty = (text: string): string =>
  escapeGithubData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/**
 * One `::error`/`::warning` annotation: `file=` and `title=` (`code at pointer`) as properties;
 * the message, the hint and `extra` lines as data (joined by escaped newlines).
 */
export function formatDiagnosticGithub(
  diagnostic: Diagnostic,
  extra: readonly string[] = [],
): string {
  const title = `${printable(diagnostic.code)} at #${printable(diagnostic.pointer)}`;
  const data = [
    printable(diagnostic.message),
    `hint: ${printable(diagnostic.hint)}`,
    ...extra.map(printable),
  ].join('\n');
  return (
    `::${severityOf(diagnostic)} file=${escapeGithubProperty(printable(diagnostic.file))},` +
    `title=${escapeGithubProperty(title)}::${escapeGithubData(data)}`
  );
}

/** Diagnostics alone (no report around them), one format for every command. */
export function formatDiagnostics(
  format: DiagnosticFormat,
  diagnostics: readonly Diagnostic[],
): string {
  switch (format) {
    case 'json':
      return `${printableJson({ diagnostics: diagnostics.map(diagnosticJson) })}\n`;
    case 'github':
      return diagnostics.map((diagnostic) => `${formatDiagnosticGithub(diagnostic)}\n`).join('');
    case 'text':
      return diagnostics.map((diagnostic) => `${formatDiagnosticText(diagnostic)}\n`).join('');
  }
}
