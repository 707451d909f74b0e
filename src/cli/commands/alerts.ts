/**
 * `evgen alerts [--out FILE] [--check] [--events DIR] [--config FILE]`: Prometheus alerting rules
 * for the catalog's outbox and consumers, thresholds from `<events>/_alerts.json` over the
 * defaults (docs/operations/README.md lists both). Written atomically, only when the catalog and
 * the thresholds are valid; `--check` writes nothing and says whether FILE is up to date.
 * Exit 0 written / up to date, 1 FILE stale or missing (--check), 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Catalog } from '../../catalog/model.js';
import {
  loadAlertThresholds,
  type AlertThresholds,
} from '../../codegen/alerts/alert-thresholds.js';
import { alertGroups, renderAlertRules } from '../../codegen/alerts/alert-rules.js';
import { loadConfig } from '../config.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import { loadProjectCatalog } from '../project-catalog.js';
import { writeAtomically } from '../write-atomically.js';

export interface AlertsCommandOptions {
  readonly events?: string;
  readonly config?: string;
  readonly out?: string;
  readonly check?: boolean;
}

export function registerAlerts(program: Command): void {
  addFolderOptions(
    program
      .command('alerts')
      .description(
        'Prometheus alerting rules for the catalog (thresholds from <events>/_alerts.json)',
      )
      .option('-o, --out <file>', 'write the rules to this file instead of stdout')
      .option('--check', 'write nothing; exit 1 if --out FILE is missing or differs'),
  ).action(async (options: AlertsCommandOptions) => {
    process.exitCode = await runAlerts(options);
  });
}

/** The command itself, returning the exit code; usable without commander. */
export function runAlerts(options: AlertsCommandOptions, cwd = process.cwd()): Promise<number> {
  return runCatalogOutput(options, cwd, 'alerts', 'the alert rules', (catalog, thresholds) =>
    renderAlertRules(alertGroups(catalog, thresholds)),
  );
}

/**
 * What `evgen alerts` and `evgen dashboard` share: the catalog and its thresholds in, one text out
 * (stdout, or `--out` written atomically, or `--check` compared with it).
 */
export function runCatalogOutput(
  options: AlertsCommandOptions,
  cwd: string,
  command: string,
  what: string,
  render: (catalog: Catalog, thresholds: AlertThresholds) => string,
): Promise<number> {
  return reportingProblems(async () => {
    if (options.check === true && options.out === undefined)
      throw refuse({
        code: 'check-needs-out',
        file: '--check',
        message: '--check compares with a file, and no --out was given',
        hint: `run evgen ${command} --out <file> --check`,
      });
    // `--out` here names the rules file, not the generated-code folder of evgen.config.json.
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const { catalog } = await loadProjectCatalog(config);
    const thresholds = await loadAlertThresholds(catalog, config.events);
    const text = render(catalog, thresholds);
    if (options.out === undefined) {
      process.stdout.write(text);
      return EXIT_OK;
    }
    const file = resolve(cwd, options.out);
    if (options.check === true) {
      const current = await readFile(file, 'utf8').catch(() => undefined);
      if (current === text) return EXIT_OK;
      process.stderr.write(
        `${options.out}: ${current === undefined ? 'missing' : 'stale'} — run evgen ${command} --out ${options.out}\n`,
      );
      return EXIT_FINDINGS;
    }
    try {
      await writeAtomically(file, text);
    } catch (error) {
      throw refuse({
        code: 'output-unwritable',
        file: options.out,
        message: `cannot write ${what}: ${(error as Error).message}`,
        hint: 'give --out a file path in a writable folder',
      });
    }
    return EXIT_OK;
  });
}
