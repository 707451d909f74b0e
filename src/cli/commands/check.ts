/**
 * `evgen check [--events DIR] [--against REF] [--policy P] [--format text|json|github]`: is every
 * new event version compatible with the versions before it (per its mode and policy), and —
 * with --against — is every released version unchanged? Prints every violation.
 * Exit 0 compatible, 1 violations, 2 bad input (invalid catalog, unknown ref, …).
 */
import { Option, type Command } from 'commander';
import { CatalogError, formatProblem } from '../../catalog/catalog-error.js';
import { loadCatalog } from '../../catalog/load-catalog.js';
import {
  COMPATIBILITY_POLICIES,
  type Catalog,
  type CompatibilityPolicy,
} from '../../catalog/model.js';
import { checkCatalog } from '../../compat/check-catalog.js';
import { GitRefError, loadCatalogAtRef } from '../../compat/git-ref-catalog.js';
import { formatReport, REPORT_FORMATS, type ReportFormat } from '../../compat/report-format.js';
import { SchemaInputError } from '../../compat/schema-document.js';
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

function badInput(message: string): number {
  process.stderr.write(`evgen check: ${message}\n`);
  return EXIT_BAD_INPUT;
}

/** The check itself, returning the exit code; usable without commander. */
export async function runCheck(options: CheckOptions): Promise<number> {
  let catalog: Catalog;
  let released: Catalog | undefined;
  try {
    const config = await loadConfig(options);
    catalog = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    if (options.against !== undefined) {
      try {
        released = await loadCatalogAtRef(config.events, options.against, {
          eventTypeFormat: config.eventTypeFormat,
        });
      } catch (error) {
        if (error instanceof CatalogError) {
          return badInput(
            `the catalog at ${options.against} is invalid:\n${error.problems.map(formatProblem).join('\n')}`,
          );
        }
        throw error;
      }
    }
  } catch (error) {
    if (error instanceof CatalogError) {
      for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
      return badInput(
        `${error.problems.length} catalog problem${error.problems.length === 1 ? '' : 's'}; nothing was checked`,
      );
    }
    if (error instanceof GitRefError) return badInput(error.message);
    throw error;
  }

  try {
    const report = checkCatalog(catalog, {
      ...(released !== undefined ? { against: released } : {}),
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
    });
    process.stdout.write(
      formatReport(
        options.format ?? 'text',
        report,
        options.against !== undefined ? { against: options.against } : {},
      ),
    );
    return report.ok ? EXIT_OK : EXIT_FINDINGS;
  } catch (error) {
    if (error instanceof SchemaInputError) return badInput(error.message);
    throw error;
  }
}
