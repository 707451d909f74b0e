/**
 * `evgen check [--events DIR] [--against REF] [--policy P] [--format text|json|github]
 * [--update-lock]`: is every new event version compatible with the versions before it (per its
 * mode and policy), and is every released version unchanged — against the git ref given with
 * --against, and against the lock `events/evgen.lock.json` when there is one? Prints every
 * violation. `--update-lock` then locks the versions not locked yet (only when the check passes).
 * Exit 0 compatible, 1 violations, 2 bad input (invalid catalog or lock, unknown ref, …).
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { isProduced } from '../../catalog/produced-events.js';
import {
  COMPATIBILITY_POLICIES,
  type Catalog,
  type CompatibilityPolicy,
} from '../../catalog/model.js';
import { checkCatalog } from '../../compat/check-catalog.js';
import { loadCatalogAgainst } from '../../compat/against-source.js';
import { GitRefError } from '../../compat/git-ref-catalog.js';
import { ComparisonProblem } from '../../compat/comparison-problem.js';
import {
  formatProblemsReport,
  formatReport,
  REPORT_FORMATS,
  type ReportContext,
  type ReportFormat,
} from '../../compat/report-format.js';
import {
  formatLock,
  LOCK_FILE_NAME,
  lockPath,
  readReleaseLock,
  withCatalogReleased,
  type LockedVersions,
  type ReleaseLock,
} from '../../compat/release-lock.js';
import { SchemaInputError } from '../../compat/schema-document.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { printable, type Diagnostic } from '../../diagnostics/diagnostic.js';
import { openBuildCache } from '../build-cache.js';
import { loadConfig } from '../config.js';
import { judgeDependencies, pinDependencies } from '../dependency-check.js';
import { loadProjectCatalog, type ProjectCatalog } from '../project-catalog.js';
import { compareViolations } from '../../compat/violation.js';
import { writeAtomically } from '../write-atomically.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';

export interface CheckOptions {
  readonly events?: string;
  readonly config?: string;
  readonly against?: string;
  readonly policy?: CompatibilityPolicy;
  readonly format?: ReportFormat;
  readonly updateLock?: boolean;
  /** `--no-cache`: compile every schema; read and write no build cache. */
  readonly cache?: boolean;
  readonly cacheDir?: string;
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
      'the released catalog, whose versions must not change: a git ref (origin/main), a git URL (https://…/repo.git#main), a tarball (catalog.tgz) or a catalog package (npm:@acme/orders-catalog@1.2.0); #subdir=<folder> says where its events folder is',
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
    .option(
      '--update-lock',
      `after a passing check, record every version not locked yet in <events>/${LOCK_FILE_NAME} (release them)`,
    )
    .option(
      '--cache-dir <dir>',
      'build cache that remembers which schemas compile and how versions bundled (default: the private per-user folder evgen build uses, ~/.cache/evgen/build-cache)',
    )
    .option('--no-cache', 'compile every schema; neither read nor write the cache')
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

/** Said once per run without a baseline. */
function noBaselineNote(
  format: ReportFormat,
  lock: ReleaseLock | undefined,
  creatingLock: boolean,
): string {
  const text = creatingLock
    ? `no --against given: versions were compared with each other only; this run creates ${LOCK_FILE_NAME}, which protects them from now on; in CI run evgen check --against origin/main`
    : lock === undefined
      ? `no --against given and no ${LOCK_FILE_NAME}: versions were compared with each other only, so an edit of a released version is not caught (and may be blamed on the next version); in CI run evgen check --against origin/main, and lock released versions with evgen check --update-lock`
      : `no --against given: released versions were compared with ${printable(lock.file)} only (versions added since it was updated are not protected); in CI run evgen check --against origin/main`;
  return format === 'github' ? `::notice title=evgen check::${text}\n` : `note: ${text}\n`;
}

/** A note beside the report (stderr for json, to keep stdout JSON). */
function printNote(format: ReportFormat, text: string): void {
  if (format === 'github') process.stdout.write(`::notice title=evgen check::${text}\n`);
  else (format === 'json' ? process.stderr : process.stdout).write(`note: ${text}\n`);
}

/** The catalog with only the events this repository produces. */
function producedOnly(catalog: Catalog): Catalog {
  return { ...catalog, events: catalog.events.filter(isProduced) };
}

/** Locks the versions not locked yet; says what it did (on stderr for json, to keep stdout JSON). */
async function updateLock(
  eventsRoot: string,
  catalog: Catalog,
  lock: ReleaseLock | undefined,
  format: ReportFormat,
): Promise<void> {
  const before = lock?.events;
  const after = withCatalogReleased(before, catalog);
  const count = (events: LockedVersions | undefined) =>
    [...(events?.values() ?? [])].reduce((sum, versions) => sum + versions.size, 0);
  const added = count(after) - count(before);
  const path = lockPath(eventsRoot);
  const text = formatLock(after);
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current !== text) await writeAtomically(path, text);
  const message =
    added === 0
      ? `evgen check: ${displayPath(path)} already locks every version\n`
      : `evgen check: locked ${added} new version${added === 1 ? '' : 's'} in ${displayPath(path)}\n`;
  (format === 'json' ? process.stderr : process.stdout).write(message);
}

/** The check itself, returning the exit code; usable without commander. */
export async function runCheck(options: CheckOptions): Promise<number> {
  const format = options.format ?? 'text';
  const context: ReportContext = options.against !== undefined ? { against: options.against } : {};
  const fail = (problems: readonly Diagnostic[]) => printProblems(format, problems, context);
  let catalog: Catalog;
  let project: ProjectCatalog;
  let released: Catalog | undefined;
  let lock: ReleaseLock | undefined;
  let events = options.events ?? 'events';
  try {
    const config = await loadConfig(options);
    events = config.events;
    // Compiling every schema with ajv is most of loading a catalog; schemas a build (or an
    // earlier check) of this evgen version compiled are not compiled again.
    const cache = await openBuildCache(options, config);
    const compiledSchemas = await cache?.readCompiledSchemas();
    const loadOptions = {
      eventTypeFormat: config.eventTypeFormat,
      ...(compiledSchemas !== undefined ? { compiledSchemas } : {}),
    };
    // Versions whose files are unchanged since a build or check are not bundled again either.
    const loadedVersions = await cache?.readLoadedVersions(config.events);
    project = await loadProjectCatalog(config, {
      ...loadOptions,
      ...(loadedVersions !== undefined ? { loadedVersions } : {}),
    });
    // The own lock and --against are about the events this repository produces; the catalogs it
    // depends on are judged by what its consumers read (judgeDependencies).
    catalog = producedOnly(project.catalog);
    if (loadedVersions !== undefined)
      await cache?.writeLoadedVersions(config.events, loadedVersions);
    lock = await readReleaseLock(config.events);
    const against = options.against;
    if (against !== undefined) {
      try {
        released = producedOnly(
          await loadCatalogAgainst(config.events, against, {
            ...loadOptions,
            ...(project.dependencyEvents.length > 0
              ? { dependencyEvents: project.dependencyEvents }
              : {}),
          }),
        );
      } catch (error) {
        if (error instanceof CatalogError) {
          return fail(
            error.problems.map((problem) => ({
              ...problem,
              message: `in the catalog at ${against}: ${problem.message}`,
            })),
          );
        }
        throw error;
      }
    }
    if (compiledSchemas !== undefined) await cache?.writeCompiledSchemas(compiledSchemas);
  } catch (error) {
    if (error instanceof CatalogError) return fail(error.problems);
    if (error instanceof GitRefError)
      return fail([
        problemAt(
          displayPath(events),
          'git-ref',
          error.message,
          'pass a ref that exists in this repository (fetch it first in CI), a git URL with #ref, a tarball (.tgz) or npm:<package>@<version>',
        ),
      ]);
    throw error;
  }

  try {
    const own = checkCatalog(catalog, {
      ...(released !== undefined ? { against: released } : {}),
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
      ...(lock !== undefined ? { lock } : {}),
    });
    const dependencies = await judgeDependencies(project, events, options.policy);
    const violations = [...own.violations, ...dependencies.violations].sort(compareViolations);
    const report = {
      ok: violations.length === 0,
      violations,
      events: own.events + dependencies.events,
      pairsChecked: own.pairsChecked + dependencies.pairsChecked,
    };
    process.stdout.write(formatReport(format, report, context));
    if (options.against === undefined && format !== 'json')
      process.stdout.write(
        noBaselineNote(
          format,
          lock,
          lock === undefined && options.updateLock === true && report.ok,
        ),
      );
    for (const note of dependencies.notes) printNote(format, note);
    if (options.updateLock === true) {
      if (report.ok) {
        await updateLock(events, catalog, lock, format);
        for (const message of await pinDependencies(project, events))
          (format === 'json' ? process.stderr : process.stdout).write(`${message}\n`);
      } else
        process.stderr.write(
          `evgen check: ${LOCK_FILE_NAME} not updated, nor the pins of the catalogs this repository reads: versions are locked only after a passing check\n`,
        );
    }
    return report.ok ? EXIT_OK : EXIT_FINDINGS;
  } catch (error) {
    if (error instanceof CatalogError) return fail(error.problems); // unreadable pins
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
