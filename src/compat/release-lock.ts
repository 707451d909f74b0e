/**
 * The released-versions lock, `<events>/evgen.lock.json`: a content hash of every released event
 * version, committed next to the catalog. `evgen check` compares each locked version with the
 * working tree, so an edit of a released version is caught without git (no `--against`, a shallow
 * clone, a tarball). `evgen check --update-lock` adds the versions not locked yet, and only after a
 * passing check; it never rewrites a locked hash — releasing is one-way, and undoing it is a
 * visible edit of the file in review.
 *
 * The hash is SHA-256 of the canonical JSON of the bundled schema, as `--against` compares them:
 * formatting does not count, a shared `_common` schema a version references does.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RELEASE_LOCK_FILE } from '../catalog/load-catalog.js';
import type { Catalog } from '../catalog/model.js';
import { CatalogError, type CatalogProblem } from '../catalog/catalog-error.js';
import { displayPath } from '../catalog/read-json-file.js';
import { jsonPointer } from '../common/json-pointer.js';
import { compareStrings, isObject } from '../common/json-value.js';
import { canonicalJson } from '../common/canonical-json.js';
import type { JsonSchema } from '../catalog/model.js';

export const LOCK_FILE_NAME = RELEASE_LOCK_FILE;
const LOCK_FORMAT = 1;
const HASH = /^sha256:[0-9a-f]{64}$/;

/** Event folder (`order/OrderCreated`) → version number → `sha256:<hex>`. */
export type LockedVersions = ReadonlyMap<string, ReadonlyMap<number, string>>;

export interface ReleaseLock {
  /** The lock file as reports name it. */
  readonly file: string;
  /** Event folder → version → SHA-256 of the version's canonical bundled schema. */
  readonly events: LockedVersions;
}

export function versionHash(bundled: JsonSchema): string {
  return `sha256:${createHash('sha256').update(canonicalJson(bundled), 'utf8').digest('hex')}`;
}

/** The lock file of an events folder. */
export function lockPath(eventsRoot: string): string {
  return join(eventsRoot, LOCK_FILE_NAME);
}

/**
 * Reads the lock of an events folder: undefined when there is none; a CatalogError (exit 2) when
 * it is not a lock evgen wrote.
 */
export async function readReleaseLock(eventsRoot: string): Promise<ReleaseLock | undefined> {
  const path = lockPath(eventsRoot);
  const file = displayPath(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CatalogError([
      lockProblem(
        file,
        '',
        `cannot read the lock (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      ),
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CatalogError([lockProblem(file, '', 'the lock is not valid JSON')]);
  }
  return { file, events: parseLock(value, file) };
}

function lockProblem(file: string, pointer: string, message: string): CatalogProblem {
  return {
    file,
    pointer,
    code: 'bad-lock',
    message,
    hint: `restore ${LOCK_FILE_NAME} from version control (git checkout -- <file>); evgen check --update-lock writes it`,
  };
}

function parseLock(value: unknown, file: string): LockedVersions {
  const problems: CatalogProblem[] = [];
  const events = new Map<string, Map<number, string>>();
  if (!isObject(value) || value['lockVersion'] !== LOCK_FORMAT || !isObject(value['events'])) {
    throw new CatalogError([
      lockProblem(file, '', `expected {"lockVersion": ${LOCK_FORMAT}, "events": {…}}`),
    ]);
  }
  for (const [dir, versions] of Object.entries(value['events'])) {
    if (!isObject(versions)) {
      problems.push(
        lockProblem(file, jsonPointer(['events', dir]), 'expected {"<version>": "sha256:…"}'),
      );
      continue;
    }
    const locked = new Map<number, string>();
    for (const [version, hash] of Object.entries(versions)) {
      if (!/^[1-9][0-9]*$/.test(version) || typeof hash !== 'string' || !HASH.test(hash)) {
        problems.push(
          lockProblem(
            file,
            jsonPointer(['events', dir, version]),
            'expected a version number mapped to "sha256:<64 hex digits>"',
          ),
        );
        continue;
      }
      locked.set(Number(version), hash);
    }
    events.set(dir, locked);
  }
  if (problems.length > 0) throw new CatalogError(problems);
  return events;
}

/** The lock after releasing every version of `catalog` not locked yet; locked hashes are kept. */
export function withCatalogReleased(
  locked: LockedVersions | undefined,
  catalog: Catalog,
): LockedVersions {
  const events = new Map<string, Map<number, string>>();
  for (const [dir, versions] of locked ?? new Map<string, ReadonlyMap<number, string>>())
    events.set(dir, new Map(versions));
  for (const event of catalog.events) {
    const versions = events.get(event.dir) ?? new Map<number, string>();
    for (const version of event.versions)
      if (!versions.has(version.version))
        versions.set(version.version, versionHash(version.bundled));
    events.set(event.dir, versions);
  }
  return events;
}

/** The file's text: sorted by folder and version, two-space JSON, LF, no timestamp. */
export function formatLock(events: LockedVersions): string {
  const body: Record<string, Record<string, string>> = {};
  for (const dir of [...events.keys()].sort(compareStrings)) {
    const versions = events.get(dir)!;
    // Integer-like keys keep ascending order in a JS object, so versions come out sorted.
    body[dir] = Object.fromEntries([...versions.entries()].sort(([a], [b]) => a - b));
  }
  return `${JSON.stringify(
    {
      lockVersion: LOCK_FORMAT,
      comment:
        'Released event versions (SHA-256 of the canonical bundled schema). Written by evgen check --update-lock; evgen check fails when a locked version changes.',
      events: body,
    },
    null,
    2,
  )}\n`;
}
