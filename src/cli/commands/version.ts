/**
 * `evgen version <domain>/<EventName>`: copies the latest `vN.schema.json` to `v(N+1).schema.json`,
 * the starting point for the next version (released versions are never edited).
 */
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CatalogError, formatProblem } from '../../catalog/catalog-error.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { loadConfig } from '../config.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../exit-codes.js';
import { parseEventRef } from '../event-ref.js';

export interface VersionOptions {
  readonly events?: string;
  readonly config?: string;
}

export function registerVersion(program: Command): void {
  program
    .command('version')
    .description('start the next version of an event by copying its latest schema')
    .argument('<domain/EventName>', 'e.g. order/OrderCreated')
    .option('--events <dir>', 'events folder (default from evgen.config.json, else "events")')
    .option('--config <file>', 'config file (default: ./evgen.config.json when it exists)')
    .action(async (ref: string, options: VersionOptions) => {
      process.exitCode = await runVersion(ref, options);
    });
}

export async function runVersion(ref: string, options: VersionOptions): Promise<number> {
  try {
    const parsed = parseEventRef(ref);
    const config = await loadConfig(options);
    const dir = join(config.events, parsed.domain, parsed.name);
    const entries = await readdir(dir).catch(() => undefined);
    if (entries === undefined) {
      process.stderr.write(`evgen version: ${displayPath(dir)} does not exist; create it with \`evgen new ${parsed.domain}/${parsed.name}\`\n`);
      return EXIT_BAD_INPUT;
    }
    const latest = Math.max(0, ...entries.map((name) => /^v([1-9][0-9]*)\.schema\.json$/.exec(name)).map((match) => (match ? Number(match[1]) : 0)));
    if (latest === 0) {
      process.stderr.write(`evgen version: ${displayPath(dir)} has no v1.schema.json to copy\n`);
      return EXIT_BAD_INPUT;
    }
    const from = join(dir, `v${latest}.schema.json`);
    const to = join(dir, `v${latest + 1}.schema.json`);
    try {
      await copyFile(from, to, 1 /* COPYFILE_EXCL: never overwrite */);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      process.stderr.write(`evgen version: ${displayPath(to)} already exists; not overwritten\n`);
      return EXIT_BAD_INPUT;
    }
    process.stdout.write(`created ${displayPath(to)} from v${latest}; edit it, then run \`evgen check\` and \`evgen build\`\n`);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CatalogError) {
      for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
      return EXIT_BAD_INPUT;
    }
    throw error;
  }
}
