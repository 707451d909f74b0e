/**
 * `evgen version <domain>/<EventName>`: copies the latest `vN.schema.json` to `v(N+1).schema.json`,
 * the starting point for the next version (released versions are never edited). Refuses an event
 * whose versions do not run 1..N: the next number would be a guess.
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { schemaVersionsIn, versionListProblems } from '../../catalog/event-folder.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_OK } from '../exit-codes.js';
import { parseEventRef } from '../event-ref.js';
import { printed } from '../../diagnostics/printable.js';

export interface VersionOptions {
  readonly events?: string;
  readonly config?: string;
}

export function registerVersion(program: Command): void {
  addFolderOptions(
    program
      .command('version')
      .description('start the next version of an event by copying its latest schema')
      .argument('<domain/EventName>', 'e.g. order/OrderCreated'),
  ).action(async (ref: string, options: VersionOptions) => {
    process.exitCode = await runVersion(ref, options);
  });
}

export function runVersion(ref: string, options: VersionOptions): Promise<number> {
  return reportingProblems(async () => {
    const parsed = parseEventRef(ref);
    const config = await loadConfig(options);
    const dir = join(config.events, parsed.domain, parsed.name);
    const versions = await schemaVersionsIn(dir);
    if (versions === undefined) {
      throw refuse({
        code: 'event-missing',
        file: displayPath(dir),
        message: 'the event does not exist',
        hint: `create it with \`evgen new ${parsed.domain}/${parsed.name}\` (or check the --events folder)`,
      });
    }
    const problems = versionListProblems(dir, versions);
    if (problems.length > 0) throw new CatalogError(problems);
    const latest = versions.at(-1)!;
    const from = join(dir, `v${latest}.schema.json`);
    const to = join(dir, `v${latest + 1}.schema.json`);
    try {
      await copyFile(from, to, 1 /* COPYFILE_EXCL: never overwrite */);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      throw refuse({
        code: 'version-exists',
        file: displayPath(to),
        message: 'already exists; not overwritten',
        hint: 'edit it, or remove it to copy again',
      });
    }
    process.stdout.write(
      printed`created ${displayPath(to)} from v${latest}; edit it, then run \`evgen check\` and \`evgen build\`` +
        '\n',
    );
    return EXIT_OK;
  });
}
