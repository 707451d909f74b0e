/**
 * `evgen registry pull [subjects...] [--registry URL] [--events DIR]`: writes the subjects evgen
 * pushed (all of them, or the ones named) into the events folder, where `evgen build` reads them:
 * a consumer repository's way to the producer's catalog. Every pulled version is added to the
 * lock (evgen.lock.json) as released. Refuses, writing nothing, when a pulled version differs
 * from one the lock already holds (a released version changed in the registry), or when the
 * pulled folder is not a valid catalog. Files are written only after all of it was read and
 * checked. Exit 0 pulled, 2 refused, bad input or a registry failure.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { loadCatalog } from '../../catalog/load-catalog.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { formatLock, lockPath, readReleaseLock } from '../../compat/release-lock.js';
import { pulledCatalog } from '../../registry/pull-catalog.js';
import type { SubjectVersion } from '../../runtime/registry/schema-registry-client.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_OK } from '../exit-codes.js';
import {
  connectRegistry,
  reportingRegistry,
  type RegistryCommandOptions,
} from '../registry-connection.js';
import { registeredVersions } from './registry-push.js';

export function registerRegistryPull(registry: Command): void {
  addFolderOptions(
    registry
      .command('pull')
      .description('write the subjects evgen pushed into the events folder (a consumer repository)')
      .argument('[subjects...]', 'subjects to pull (default: every subject evgen pushed)')
      .option(
        '--registry <url>',
        'base URL of the Confluent API (default: EVGEN_REGISTRY_URL, or "registry.url" in evgen.config.json)',
      ),
  ).action(async (subjects: string[], options: RegistryCommandOptions) => {
    process.exitCode = await runRegistryPull(subjects, options);
  });
}

export function runRegistryPull(
  only: readonly string[],
  options: RegistryCommandOptions,
  cwd = process.cwd(),
): Promise<number> {
  return reportingProblems(async () => {
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const client = connectRegistry(options.registry, config);
    const names =
      only.length > 0 ? [...only] : (await reportingRegistry(() => client.subjects())).sort();
    const subjects: { subject: string; versions: SubjectVersion[] }[] = [];
    for (const subject of names) {
      const versions = await reportingRegistry(() => registeredVersions(client, subject), subject);
      if (versions === undefined)
        throw refuse({
          code: 'registry-not-found',
          file: subject,
          message: `the registry has no subject ${subject}`,
          hint: 'name subjects the registry lists (GET /subjects), or none to pull every subject evgen pushed',
        });
      subjects.push({ subject, versions });
    }
    const pulled = pulledCatalog(subjects);
    const events = displayPath(config.events);
    if (pulled.problems.length > 0)
      throw new CatalogError(
        pulled.problems.map((message) => ({
          code: 'registry-pull',
          file: events,
          pointer: '',
          message: `${message}; nothing was written`,
          hint: 'pull the subjects evgen registry push wrote',
        })),
      );
    // A version the lock already holds must come back unchanged: released means immutable.
    const lock = await readReleaseLock(config.events);
    const merged = new Map<string, Map<number, string>>();
    for (const [folder, versions] of lock?.events ?? []) merged.set(folder, new Map(versions));
    const changed: string[] = [];
    for (const [folder, versions] of pulled.released) {
      const locked = merged.get(folder) ?? new Map<number, string>();
      for (const [version, hash] of versions) {
        const before = locked.get(version);
        if (before !== undefined && before !== hash) changed.push(`${folder} v${version}`);
        locked.set(version, hash);
      }
      merged.set(folder, locked);
    }
    if (changed.length > 0)
      throw refuse({
        code: 'released-version-differs',
        file: lock?.file ?? events,
        message: `the registry holds a different schema for released ${changed.join(', ')}; nothing was written`,
        hint: 'a released version must not change: ask the producer; the registry, not this copy, is wrong',
      });
    // Write into a scratch copy first and load it as a catalog: only a folder evgen build accepts
    // replaces the files.
    const scratch = await mkdtemp(join(tmpdir(), 'evgen-pull-'));
    try {
      await cp(config.events, scratch, { recursive: true }).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
      await writeFiles(scratch, pulled.files, formatLock(merged));
      await loadCatalog(scratch, { eventTypeFormat: config.eventTypeFormat });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    await writeFiles(config.events, pulled.files, formatLock(merged));
    for (const skipped of pulled.skipped) process.stdout.write(`skipped ${skipped}\n`);
    const versions = [...pulled.released.values()].reduce((sum, v) => sum + v.size, 0);
    process.stdout.write(
      `pulled ${pulled.released.size} events (${versions} versions) from ${client.url} into ${events}\n`,
    );
    return EXIT_OK;
  });
}

async function writeFiles(
  root: string,
  files: ReadonlyMap<string, string>,
  lock: string,
): Promise<void> {
  for (const [path, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const target = join(root, path);
    await mkdir(dirname(target), { recursive: true });
    if ((await readFile(target, 'utf8').catch(() => undefined)) !== text)
      await writeFile(target, text);
  }
  await writeFile(lockPath(root), lock);
}
