/**
 * `evgen dashboard [--out FILE] [--check] [--events DIR] [--config FILE]`: a Grafana dashboard
 * (JSON) for the catalog's outbox and consumers over the series `createPrometheusMetrics`
 * exports, with the thresholds of `<events>/_alerts.json` drawn on its panels — the same source
 * as `evgen alerts`. Written atomically, only when the catalog and the thresholds are valid;
 * `--check` writes nothing and says whether FILE is up to date.
 * Exit 0 written / up to date, 1 FILE stale or missing (--check), 2 bad input.
 */
import type { Command } from 'commander';
import {
  grafanaDashboard,
  renderGrafanaDashboard,
} from '../../codegen/alerts/grafana-dashboard.js';
import { addFolderOptions } from '../command-support.js';
import { runCatalogOutput, type AlertsCommandOptions } from './alerts.js';

export function registerDashboard(program: Command): void {
  addFolderOptions(
    program
      .command('dashboard')
      .description(
        'Grafana dashboard (JSON) for the catalog, thresholds from <events>/_alerts.json',
      )
      .option('-o, --out <file>', 'write the dashboard to this file instead of stdout')
      .option('--check', 'write nothing; exit 1 if --out FILE is missing or differs'),
  ).action(async (options: AlertsCommandOptions) => {
    process.exitCode = await runDashboard(options);
  });
}

/** The command itself, returning the exit code; usable without commander. */
export function runDashboard(options: AlertsCommandOptions, cwd = process.cwd()): Promise<number> {
  return runCatalogOutput(options, cwd, 'dashboard', 'the dashboard', (catalog, thresholds) =>
    renderGrafanaDashboard(grafanaDashboard(catalog, thresholds)),
  );
}
