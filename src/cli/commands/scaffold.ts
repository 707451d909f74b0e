/**
 * `evgen scaffold [--events DIR] [--handlers DIR] [--out DIR] [--config FILE]`: write handler,
 * upcaster and wiring stubs for every consumer into a folder the user owns (default `handlers/`).
 * Creates missing files, appends missing stubs to existing ones, never overwrites anything.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { Command } from 'commander';
import { loadProjectCatalog } from '../project-catalog.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { planScaffold } from '../../scaffold/index.js';
import { loadConfig } from '../config.js';
import { addFolderOptions, reportingProblems } from '../command-support.js';
import { EXIT_OK } from '../exit-codes.js';
import { printed } from '../../diagnostics/printable.js';

export interface ScaffoldCommandOptions {
  readonly events?: string;
  readonly out?: string;
  readonly handlers?: string;
  readonly config?: string;
}

export function registerScaffold(program: Command): void {
  addFolderOptions(
    program
      .command('scaffold')
      .description(
        'write handler and upcaster stubs for every consumer into a folder you own (never overwrites)',
      ),
    {
      handlers: 'folder for your handler code',
      out: 'folder of the generated code the stubs import',
    },
  ).action(async (options: ScaffoldCommandOptions) => {
    process.exitCode = await runScaffold(options);
  });
}

/** The command itself, returning the exit code; usable without commander. */
export function runScaffold(options: ScaffoldCommandOptions, cwd = process.cwd()): Promise<number> {
  return reportingProblems(async () => {
    const config = await loadConfig(options, cwd);
    const { catalog } = await loadProjectCatalog(config);
    const handlersDir = config.handlers;
    const plan = await planScaffold(catalog, {
      // Both relative to the handlers folder's parent, so import paths between them are right.
      handlersDir: relative(cwd, handlersDir) || '.',
      generatedDir: relative(cwd, config.out) || '.',
      runtimeImport: config.runtimeImport,
      readFile: (path) => readFile(join(handlersDir, path), 'utf8').catch(() => undefined),
    });
    for (const change of plan.changes) {
      const file = join(handlersDir, change.path);
      await mkdir(dirname(file), { recursive: true });
      // `wx` refuses to replace a file that appeared since it was read; extensions rewrite the read content plus new lines.
      await writeFile(file, change.content, change.action === 'create' ? { flag: 'wx' } : {});
      process.stdout.write(
        printed`${change.action === 'create' ? 'created' : 'extended'} ${relative(cwd, file)}: ${change.added.join(', ')}` +
          '\n',
      );
    }
    for (const note of plan.notes) process.stdout.write(printed`note: ${note}` + '\n');
    if (catalog.consumers.length === 0) {
      process.stdout.write(
        printed`evgen scaffold: no consumers are declared (add one as ${displayPath(join(config.events, '_consumers'))}/<service-name>.json); nothing written` +
          '\n',
      );
    } else if (plan.changes.length === 0)
      process.stdout.write('evgen scaffold: every stub already exists; nothing written\n');
    return EXIT_OK;
  });
}
