/**
 * Renders a catalog check for people (`text`), for machines (`json`, stable: sorted, fixed key
 * order) and for GitHub Actions (`github`: one `::error` workflow annotation per finding). A check
 * that could not run (bad catalog, unknown ref, a schema too complex to compare) is rendered in
 * the same format with its problems, so CI tooling sees exit-2 problems too.
 */
import { printable, type Diagnostic } from '../diagnostics/diagnostic.js';
import {
  diagnosticJson,
  DIAGNOSTIC_FORMATS,
  formatDiagnosticGithub,
  formatDiagnosticText,
  type DiagnosticFormat,
} from '../diagnostics/format.js';
import type { CatalogCheckReport } from './check-catalog.js';
import { deployOrderText, type CompatibilityViolation } from './violation.js';
import { printableJson } from '../diagnostics/printable.js';

export const REPORT_FORMATS = DIAGNOSTIC_FORMATS;
export type ReportFormat = DiagnosticFormat;

export interface ReportContext {
  /** e.g. `--against main`, shown in summaries. */
  readonly against?: string;
}

function summaryLine(report: CatalogCheckReport, context: ReportContext): string {
  const scope = context.against === undefined ? '' : ` against ${printable(context.against)}`;
  const counts = `(${report.events} events, ${report.pairsChecked} version pairs checked)`;
  if (report.ok) return `evgen check: compatible${scope} ${counts}`;
  const count = report.violations.length;
  return `evgen check: ${count} violation${count === 1 ? '' : 's'}${scope} ${counts}`;
}

function problemsLine(problems: readonly Diagnostic[]): string {
  const count = problems.length;
  return `evgen check: ${count} problem${count === 1 ? '' : 's'}; nothing was checked`;
}

const deployLine = (violation: CompatibilityViolation) =>
  `deploy: ${deployOrderText(violation.deployFirst, violation.mode)}`;

export function formatText(report: CatalogCheckReport, context: ReportContext = {}): string {
  const lines = report.violations.map((violation) =>
    formatDiagnosticText(violation, [deployLine(violation)]),
  );
  lines.push(summaryLine(report, context));
  return `${lines.join('\n')}\n`;
}

function violationJson(violation: CompatibilityViolation) {
  return {
    ...diagnosticJson(violation),
    path: printable(violation.path),
    deployFirst: violation.deployFirst,
    eventType: printable(violation.eventType),
    version: violation.version,
    against: violation.against ?? null,
    direction: violation.direction ?? null,
    mode: violation.mode,
    policy: violation.policy,
  };
}

function jsonBody(
  report: CatalogCheckReport,
  problems: readonly Diagnostic[],
  context: ReportContext,
): string {
  const body = {
    ok: report.ok && problems.length === 0,
    against: context.against === undefined ? null : printable(context.against),
    events: report.events,
    pairsChecked: report.pairsChecked,
    problems: problems.map(diagnosticJson),
    violations: report.violations.map(violationJson),
  };
  return `${printableJson(body)}\n`;
}

/** A stable machine-readable report (keys in fixed order, violations sorted). */
export function formatJson(report: CatalogCheckReport, context: ReportContext = {}): string {
  return jsonBody(report, [], context);
}

export function formatGithub(report: CatalogCheckReport, context: ReportContext = {}): string {
  const lines = report.violations.map((violation) =>
    formatDiagnosticGithub(violation, [deployLine(violation)]),
  );
  lines.push(summaryLine(report, context));
  return `${lines.join('\n')}\n`;
}

export function formatReport(
  format: ReportFormat,
  report: CatalogCheckReport,
  context: ReportContext = {},
): string {
  switch (format) {
    case 'json':
      return formatJson(report, context);
    case 'github':
      return formatGithub(report, context);
    case 'text':
      return formatText(report, context);
  }
}

const NOTHING_CHECKED: CatalogCheckReport = {
  ok: false,
  violations: [],
  events: 0,
  pairsChecked: 0,
};

/** A check that could not run (exit 2): its problems in the requested format. */
export function formatProblemsReport(
  format: ReportFormat,
  problems: readonly Diagnostic[],
  context: ReportContext = {},
): string {
  switch (format) {
    case 'json':
      return jsonBody(NOTHING_CHECKED, problems, context);
    case 'github':
      return `${[...problems.map((problem) => formatDiagnosticGithub(problem)), problemsLine(problems)].join('\n')}\n`;
    case 'text':
      return `${[...problems.map((problem) => formatDiagnosticText(problem)), problemsLine(problems)].join('\n')}\n`;
  }
}
