/**
 * The files of one event folder (`events/<domain>/<EventName>/`): which payload schema versions it
 * holds and whether they run 1..N without gaps. Shared by the catalog loader and `evgen version`,
 * so both read the folder, and word a gap, the same way.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogProblem } from './catalog-error.js';
import { displayPath } from './read-json-file.js';
import { compareStrings } from '../common/json-value.js';

/** `v1.schema.json`, `v2.schema.json`, …: no leading zeros, no v0. */
export const VERSION_FILE = /^v([1-9][0-9]*)\.schema\.json$/;

/** The version number a file name stands for, or undefined when it is no payload schema file. */
export function schemaFileVersion(fileName: string): number | undefined {
  const match = VERSION_FILE.exec(fileName);
  return match === null ? undefined : Number(match[1]);
}

/** Version numbers of the `v<N>.schema.json` files in `dir`, ascending; undefined when `dir` cannot be read. */
export async function schemaVersionsIn(dir: string): Promise<number[] | undefined> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (entries === undefined) return undefined;
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => schemaFileVersion(entry.name))
    .filter((version): version is number => version !== undefined)
    .sort((a, b) => a - b);
}

/** Numbers missing from 1..max of an ascending list. */
export function missingVersions(sorted: readonly number[]): number[] {
  const present = new Set(sorted);
  const missing: number[] = [];
  for (let n = 1; n <= (sorted.at(-1) ?? 0); n++) if (!present.has(n)) missing.push(n);
  return missing;
}

/** The problems of an event folder's version list (absolute `dir`): none, no v1, or gaps. */
export function versionListProblems(dir: string, sorted: readonly number[]): CatalogProblem[] {
  if (sorted.length === 0) {
    return [
      {
        code: 'no-versions',
        file: displayPath(dir),
        pointer: '',
        message: 'the event has no v1.schema.json',
        hint: 'add the payload schema as v1.schema.json',
      },
    ];
  }
  const missing = missingVersions(sorted);
  if (missing.length === 0) return [];
  return [
    {
      code: 'version-gap',
      file: displayPath(dir),
      pointer: '',
      message: `versions must be 1..${sorted[sorted.length - 1]!} without gaps; missing ${missing.map((n) => `v${n}.schema.json`).join(', ')}`,
      hint: 'renumber the schema files so versions run 1, 2, 3, … (released versions never change)',
    },
  ];
}

/** An event folder found on disk, whatever state its files are in. */
export interface EventFolder {
  readonly domain: string;
  readonly name: string;
  /** Absolute folder path. */
  readonly dir: string;
  readonly versions: readonly number[];
}

/**
 * Every `<domain>/<EventName>/` folder under the events folder, sorted, skipping `_shared` and
 * hidden folders as the loader does. Reads folder listings only, so it works on a catalog that
 * does not load yet (e.g. while `evgen new` adds an event).
 */
export async function listEventFolders(eventsDir: string): Promise<EventFolder[]> {
  const visible = async (dir: string) =>
    (await readdir(dir, { withFileTypes: true }).catch((): Dirent[] => []))
      .filter(
        (entry) =>
          entry.isDirectory() && !entry.name.startsWith('.') && !entry.name.startsWith('_'),
      )
      .map((entry) => entry.name)
      .sort(compareStrings);
  const folders: EventFolder[] = [];
  for (const domain of await visible(eventsDir)) {
    for (const name of await visible(join(eventsDir, domain))) {
      const dir = join(eventsDir, domain, name);
      folders.push({ domain, name, dir, versions: (await schemaVersionsIn(dir)) ?? [] });
    }
  }
  return folders;
}
