/**
 * `evgen catalog check-package [dir]`: is the package in `dir` (default: the working folder, as
 * npm runs `prepack` there) a catalog package — `npm pack` would put exactly its events folder
 * and lock in it, the folder loads, and the lock releases every version in it unchanged? Meant as
 * the package's `prepack` script, so `npm pack` and `npm publish` stop on a bad catalog.
 * Exit 0 a catalog package, 2 not one (every problem printed).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { displayPath } from '../../catalog/read-json-file.js';
import { checkCatalogPackage } from '../../compat/catalog-package.js';
import { refuse, reportingProblems } from '../command-support.js';
import { EXIT_OK } from '../exit-codes.js';

const run = promisify(execFile);

export function registerCatalog(program: Command): void {
  const catalog = program
    .command('catalog')
    .description('publish the event catalog as an npm package for consumers in other repositories');
  catalog
    .command('check-package')
    .argument('[dir]', 'the catalog package folder (default: the working folder)')
    .option(
      '--event-type <template>',
      'the producer\'s naming.eventType, when it sets one (default: "evgen.eventType" in package.json)',
    )
    .description(
      'check that npm pack would publish exactly a loadable, locked catalog (use it as the "prepack" script)',
    )
    .action(async (dir: string | undefined, options: { eventType?: string }) => {
      process.exitCode = await runCheckPackage(resolve(dir ?? '.'), options.eventType);
    });
}

/** The files `npm pack` would pack, as npm itself lists them (scripts off: no prepack loop). */
async function packedFiles(packageDir: string): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: packageDir,
      maxBuffer: 64 * 1024 * 1024,
    }));
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw refuse({
      code: 'npm-pack-failed',
      file: displayPath(resolve(packageDir, 'package.json')),
      message: `npm pack --dry-run failed: ${stderr.trim().split('\n').slice(-3).join(' ')}`,
      hint: 'run it in the package folder and fix what npm says (a package.json with name and version)',
    });
  }
  const listing = JSON.parse(stdout) as { files?: { path: string }[] }[];
  return (listing[0]?.files ?? []).map((file) => file.path);
}

export async function runCheckPackage(
  packageDir: string,
  eventTypeFormat: string | undefined,
): Promise<number> {
  return reportingProblems(async () => {
    const result = await checkCatalogPackage(
      packageDir,
      await packedFiles(packageDir),
      eventTypeFormat,
    );
    // stderr: as a prepack script its words must not mix into `npm pack --json`.
    process.stderr.write(
      `evgen catalog: ${displayPath(packageDir) || '.'} is a catalog package (${result.events} events, ${result.versions} released versions)\n`,
    );
    return EXIT_OK;
  });
}
