/**
 * Renders a catalog check for people (`text`), for machines (`json`, stable: sorted, fixed key
 * order) and for GitHub Actions (`github`: one `::error` workflow annotation per violation).
 */
import type { CatalogCheckReport } from './check-catalog.js';
import { deployOrderText, type CompatibilityViolation } from './violation.js';

export const REPORT_FORMATS = ['text', 'json', 'github'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportContext {
  /** e.g. `--against main`, shown in summaries. */
  readonly against?: string;
}

function where(violation: CompatibilityViolation): string {
  return `${violation.file}${violation.path}`;
}

function summaryLine(report: CatalogCheckReport, context: ReportContext): string {
  const scope = context.against === undefined ? '' : ` against ${context.against}`;
  const counts = `(${report.events} events, ${report.pairsChecked} version pairs checked)`;
  if (report.ok) return `evgen check: compatible${scope} ${counts}`;
  const count = report.violations.length;
  return `evgen check: ${count} violation${count === 1 ? '' : 's'}${scope} ${counts}`;
}

export function formatText(report: CatalogCheckReport, context: ReportContext = {}): string {
  const lines: string[] = [];
  for (const violation of report.violations) {
    lines.push(`${where(violation)}: ${violation.rule}: ${violation.message}`);
    lines.push(`  hint: ${violation.hint}`);
    lines.push(`  deploy: ${deployOrderText(violation.deployFirst)}`);
  }
  lines.push(summaryLine(report, context));
  return `${lines.join('\n')}\n`;
}

/** A stable machine-readable report (keys in fixed order, violations sorted). */
export function formatJson(report: CatalogCheckReport, context: ReportContext = {}): string {
  const body = {
    ok: report.ok,
    against: context.against ?? null,
    events: report.events,
    pairsChecked: report.pairsChecked,
    violations: report.violations.map((violation) => ({
      file: violation.file,
      pointer: violation.pointer,
      path: violation.path,
      rule: violation.rule,
      message: violation.message,
      hint: violation.hint,
      deployFirst: violation.deployFirst,
      eventType: violation.eventType,
      version: violation.version,
      against: violation.against ?? null,
      direction: violation.direction ?? null,
      mode: violation.mode,
      policy: violation.policy,
    })),
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}

// Workflow command escaping (see @actions/core): data escapes %, CR, LF; properties also : and ,.
const escapeData = (text: string) =>
  text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function formatGithub(report: CatalogCheckReport, context: ReportContext = {}): string {
  const lines = report.violations.map(
    (violation) =>
      `::error file=${escapeProperty(violation.file)},title=${escapeProperty(`${violation.rule} at ${violation.path}`)}::` +
      escapeData(
        `${violation.message}\nhint: ${violation.hint}\ndeploy: ${deployOrderText(violation.deployFirst)}`,
      ),
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
