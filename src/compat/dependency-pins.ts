/**
 * What a consumer read of a catalog it depends on, committed in the consumer's repository:
 * `<events>/_catalogs/<name>.lock.json`, one file per dependency (the consumer's own
 * `evgen.lock.json` stays about its own events). For each event the consumer's consumers subscribe
 * to: the compatibility mode it was built with, the hash of every version it knows, and the
 * newest of them (its reader, the schema the deployed consumer reads newer versions with) in full,
 * so an upgraded package can be judged against what the consumer really reads even when the
 * producer has since edited that version.
 *
 * Written by `evgen check --update-lock` after a passing check; `evgen check` judges the
 * installed package against it (see `checkDependency`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CatalogError, type CatalogProblem } from '../catalog/catalog-error.js';
import {
  COMPATIBILITY_MODES,
  type Catalog,
  type CompatibilityMode,
  type JsonSchema,
} from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { jsonPointer } from '../common/json-pointer.js';
import { compareStrings, isObject } from '../common/json-value.js';
import { versionHash } from './release-lock.js';

/** The folder of pin files in the consumer's events folder (skipped by the loader: `_`). */
export const PINS_DIR = '_catalogs';
const PIN_FORMAT = 1;
const HASH = /^sha256:[0-9a-f]{64}$/;

export interface PinnedEvent {
  readonly eventType: string;
  readonly compatibility: CompatibilityMode;
  /** Version → `sha256:<hex>` of its bundled schema. */
  readonly versions: ReadonlyMap<number, string>;
  /** The newest pinned version's bundled schema. */
  readonly reader: JsonSchema;
}

export interface DependencyPins {
  /** The pin file as reports name it. */
  readonly file: string;
  /** The package (`name@version`) or folder pinned, for messages. */
  readonly source: string;
  /** Event folder (`order/OrderPaid`) → what was pinned. */
  readonly events: ReadonlyMap<string, PinnedEvent>;
}

export function pinsPath(eventsRoot: string, name: string): string {
  return join(eventsRoot, PINS_DIR, `${name}.lock.json`);
}

function pinProblem(file: string, pointer: string, message: string): CatalogProblem {
  return {
    file,
    pointer,
    code: 'bad-pins',
    message,
    hint: 'restore it from version control (git checkout -- <file>); evgen check --update-lock writes it',
  };
}

/** The pins of one dependency; undefined when it was never pinned. */
export async function readDependencyPins(
  eventsRoot: string,
  name: string,
): Promise<DependencyPins | undefined> {
  const path = pinsPath(eventsRoot, name);
  const file = displayPath(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CatalogError([pinProblem(file, '', 'cannot read the pins')]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CatalogError([pinProblem(file, '', 'the pins are not valid JSON')]);
  }
  if (
    !isObject(value) ||
    value['pinVersion'] !== PIN_FORMAT ||
    typeof value['source'] !== 'string' ||
    !isObject(value['events'])
  )
    throw new CatalogError([
      pinProblem(file, '', `expected {"pinVersion": ${PIN_FORMAT}, "source": …, "events": {…}}`),
    ]);
  const problems: CatalogProblem[] = [];
  const events = new Map<string, PinnedEvent>();
  for (const [dir, entry] of Object.entries(value['events'])) {
    const pointer = jsonPointer(['events', dir]);
    const versions = new Map<number, string>();
    const ok =
      isObject(entry) &&
      typeof entry['eventType'] === 'string' &&
      (COMPATIBILITY_MODES as readonly unknown[]).includes(entry['compatibility']) &&
      isObject(entry['versions']) &&
      (typeof entry['reader'] === 'boolean' || isObject(entry['reader'])) &&
      Object.entries(entry['versions']).every(([version, hash]) => {
        if (!/^[1-9][0-9]*$/.test(version) || typeof hash !== 'string' || !HASH.test(hash))
          return false;
        versions.set(Number(version), hash);
        return true;
      }) &&
      versions.size > 0;
    if (!ok) {
      problems.push(
        pinProblem(
          file,
          pointer,
          'expected {"eventType", "compatibility", "versions": {"<n>": "sha256:…"}, "reader"}',
        ),
      );
      continue;
    }
    events.set(dir, {
      eventType: entry['eventType'] as string,
      compatibility: entry['compatibility'] as CompatibilityMode,
      versions,
      reader: entry['reader'] as JsonSchema,
    });
  }
  if (problems.length > 0) throw new CatalogError(problems);
  return { file, source: value['source'], events };
}

/**
 * The pins after reading `catalog` now: the subscribed events as they are installed. Events
 * pinned before and no longer subscribed are dropped; nothing else is kept from `before`.
 */
export function pinsOf(
  catalog: Catalog,
  subscribed: ReadonlySet<string>,
): Map<string, PinnedEvent> {
  const events = new Map<string, PinnedEvent>();
  for (const event of catalog.events) {
    if (!subscribed.has(event.eventType) || event.versions.length === 0) continue;
    events.set(event.dir, {
      eventType: event.eventType,
      compatibility: event.compatibility,
      versions: new Map(event.versions.map((v) => [v.version, versionHash(v.bundled)])),
      reader: event.versions[event.versions.length - 1]!.bundled,
    });
  }
  return events;
}

/** The file's text: sorted, two-space JSON, LF, no timestamp. */
export function formatPins(
  name: string,
  source: string,
  events: ReadonlyMap<string, PinnedEvent>,
): string {
  const body: Record<string, unknown> = {};
  for (const dir of [...events.keys()].sort(compareStrings)) {
    const pinned = events.get(dir)!;
    body[dir] = {
      eventType: pinned.eventType,
      compatibility: pinned.compatibility,
      versions: Object.fromEntries([...pinned.versions.entries()].sort(([a], [b]) => a - b)),
      reader: pinned.reader,
    };
  }
  return `${JSON.stringify(
    {
      pinVersion: PIN_FORMAT,
      comment: `What this repository's consumers read of catalog "${name}": each subscribed event's mode, the versions they know and the newest (their reader). Written by evgen check --update-lock; evgen check judges an upgraded catalog against it.`,
      source,
      events: body,
    },
    null,
    2,
  )}\n`;
}
