/**
 * `evgen check [--events DIR] [--against REF] [--policy P] [--format text|json|github]`: is every
 * new event version compatible with the versions before it (per its mode and policy), and —
 * with --against — is every released version unchanged? Prints every violation.
 * Exit 0 compatible, 1 violations, 2 bad input (invalid catalog, unknown ref, …).
 */
import { Option, type Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { loadCatalog } from '../../catalog/load-catalog.js';
import {
  COMPATIBILITY_POLICIES,
  type Catalog,
  type CompatibilityPolicy,
} from '../../catalog/model.js';
import { checkCatalog } from '../../compat/check-catalog.js';
import { GitRefError, loadCatalogAtRef } from '../../compat/git-ref-catalog.js';
import { ComparisonProblem } from '../../compat/comparison-problem.js';
import {
  formatProblemsReport,
  formatReport,
  REPORT_FORMATS,
  type ReportContext,
  type ReportFormat,
} from '../../compat/report-format.js';
import { SchemaInputError } from '../../compat/schema-document.js';
import { displayPath } from '../../catalog/read-json-file.js';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { loadConfig } from '../config.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';

export interface CheckOptions {
  readonly events?: string;
  readonly config?: string;
  readonly against?: string;
  readonly policy?: CompatibilityPolicy;
  readonly format?: ReportFormat;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description(
      'check that event schema changes are compatible (and released versions unchanged with --against)',
    )
    .option('--events <dir>', 'events folder (default: "events", or "events" in evgen.config.json)')
    .option('--config <file>', 'config file (default: ./evgen.config.json when it exists)')
    .option(
      '--against <ref>',
      'git ref of the released catalog (e.g. origin/main); its versions must not change',
    )
    .addOption(
      new Option(
        '--policy <policy>',
        'policy for every event (default: each event\'s own, "evgen" unless set)',
      ).choices([...COMPATIBILITY_POLICIES]),
    )
    .addOption(
      new Option('--format <format>', 'output format').choices([...REPORT_FORMATS]).default('text'),
    )
    .action(async (options: CheckOptions) => {
      process.exitCode = await runCheck(options);
    });
}

/** Where the output of a format goes: text reports problems on stderr, machine formats on stdout. */
function printProblems(
  format: ReportFormat,
  problems: readonly Diagnostic[],
  context: ReportContext,
): number {
  const output = formatProblemsReport(format, problems, context);
  if (format === 'text') process.stderr.write(output);
  else process.stdout.write(output);
  return EXIT_BAD_INPUT;
}

/** A problem that is not about one place in a file (an unknown git ref, an unreadable folder). */
function problemAt(file: string, code: string, message: string, hint: string): Diagnostic {
  return { file, pointer: '', code, message, hint };
}

const NO_BASELINE =
  'no --against given: versions were compared with each other only, so an edit of a released version is not caught (and may be blamed on the next version); in CI run evgen check --against origin/main';

/** Said once per run without a baseline. */
function noBaselineNote(format: ReportFormat): string {
  return format === 'github'
    ? `::notice title=evgen check::${NO_BASELINE}\n`
    : `note: ${NO_BASELINE}\n`;
}

/** The check itself, returning the exit code; usable without commander. */
export async function runCheck(options: CheckOptions): Promise<number> {
  const format = options.format ?? 'text';
  const context: ReportContext = options.against !== undefined ? { against: options.against } : {};
  const fail = (problems: readonly Diagnostic[]) => printProblems(format, problems, context);
  let catalog: Catalog;
  let released: Catalog | undefined;
  let events = options.events ?? 'events';
  try {
    const config = await loadConfig(options);
    events = config.events;
    catalog = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    if (options.against !== undefined) {
      try {
        released = await loadCatalogAtRef(config.events, options.against, {
          eventTypeFormat: config.eventTypeFormat,
        });
      } catch (error) {
        if (error instanceof CatalogError) {
          return fail(
            error.problems.map((problem) => ({
              ...problem,
              message: `in the catalog at ${options.against}: ${problem.message}`,
            })),
          );
        }
        throw error;
      }
    }
  } catch (error) {
    if (error instanceof CatalogError) return fail(error.problems);
    if (error instanceof GitRefError)
      return fail([
        problemAt(
          displayPath(events),
          'git-ref',
          error.message,
          'pass a ref that exists in this repository, e.g. --against origin/main (fetch it first in CI)',
        ),
      ]);
    throw error;
  }

  try {
    const report = checkCatalog(catalog, {
      ...(released !== undefined ? { against: released } : {}),
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
    });
    process.stdout.write(formatReport(format, report, context));
    if (options.against === undefined && format !== 'json')
      process.stdout.write(noBaselineNote(format));
    return report.ok ? EXIT_OK : EXIT_FINDINGS;
  } catch (error) {
    if (error instanceof ComparisonProblem) return fail([error.diagnostic]);
    if (error instanceof SchemaInputError)
      return fail([
        problemAt(
          displayPath(events),
          'schema-input',
          error.message,
          'fix the reference or keyword named in the message',
        ),
      ]);
    throw error;
  }
}
