/**
 * Judges an installed catalog a repository depends on by what the repository reads, not by what
 * the producer declares: for every event its consumers subscribe to, against the pins (what the
 * deployed consumer was built with, see `dependency-pins.ts`):
 *
 * - every pinned version must still be there and unchanged (the consumer validates with it);
 * - every newer version (a writer the deployed consumer has never seen) must be readable by the
 *   pinned reader, the newest pinned version, whatever mode the producer declares now: the
 *   deployed consumer reads newer versions with that reader;
 * - a change of the event's compatibility mode is itself a finding: the producer's promise to
 *   this consumer changed (a switch to NONE lets the producer's own check pass anything).
 */
import { join } from 'node:path';
import type { Catalog, CompatibilityPolicy, EventDefinition } from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { jsonPointer } from '../common/json-pointer.js';
import { compareStrings } from '../common/json-value.js';
import { checkReadable } from './diff-schemas.js';
import { locatePath } from './locate-path.js';
import { MODES } from './modes.js';
import type { DependencyPins, PinnedEvent } from './dependency-pins.js';
import { versionHash } from './release-lock.js';
import { explain } from './rules/hints.js';
import type { CompatibilityViolation } from './violation.js';

/** The rule reported when a subscribed event's compatibility mode is not the pinned one. */
export const MODE_CHANGED_RULE = 'COMPATIBILITY_MODE_CHANGED';

export interface DependencyCheckInput {
  /** The dependency's name in the config. */
  readonly name: string;
  /** The installed catalog. */
  readonly catalog: Catalog;
  readonly pins: DependencyPins;
  /** Event types the repository's consumers subscribe to. */
  readonly subscribed: ReadonlySet<string>;
  /** Overrides each event's own policy. */
  readonly policy?: CompatibilityPolicy;
}

export interface DependencyCheckResult {
  readonly violations: CompatibilityViolation[];
  /** What is worth knowing but fails nothing (an event subscribed but not pinned yet, …). */
  readonly notes: string[];
  readonly events: number;
  readonly pairsChecked: number;
}

export function checkDependency(input: DependencyCheckInput): DependencyCheckResult {
  const { catalog, pins } = input;
  const violations: CompatibilityViolation[] = [];
  const notes: string[] = [];
  let pairsChecked = 0;
  let events = 0;
  const byDir = new Map(catalog.events.map((event) => [event.dir, event]));
  for (const [dir, pinned] of [...pins.events.entries()].sort(([a], [b]) => compareStrings(a, b))) {
    if (!input.subscribed.has(pinned.eventType)) continue;
    events++;
    const event = byDir.get(dir);
    const policy = input.policy ?? event?.policy ?? 'evgen';
    const base = { eventType: pinned.eventType, mode: pinned.compatibility, policy } as const;
    if (event === undefined) {
      violations.push({
        ...base,
        file: pins.file,
        pointer: jsonPointer(['events', dir]),
        path: '#/',
        code: 'RELEASED_VERSION_DELETED',
        message: `${pinned.eventType}, which this repository's consumers read (pinned from ${pins.source}), is no longer in catalog ${input.name}`,
        hint: 'ask the producer to restore it; an event consumers read is retired by a new version, never deleted',
        deployFirst: 'none',
        version: Math.max(...pinned.versions.keys()),
      });
      continue;
    }
    const schemaFile = (file: string) => displayPath(join(catalog.root, file));
    for (const [number, hash] of pinned.versions) {
      const version = event.versions.find((candidate) => candidate.version === number);
      if (version !== undefined && versionHash(version.bundled) === hash) continue;
      violations.push({
        ...base,
        file: schemaFile(version?.file ?? `${dir}/v${number}.schema.json`),
        pointer: '',
        path: '#/',
        code: version === undefined ? 'RELEASED_VERSION_DELETED' : 'RELEASED_VERSION_CHANGED',
        message: `v${number} of ${pinned.eventType} ${version === undefined ? 'has been deleted' : 'has changed'} in catalog ${input.name}; this repository's consumers read it as pinned from ${pins.source} (${pins.file})`,
        hint: 'released versions are immutable: ask the producer to restore it and add a new version with the change',
        deployFirst: 'none',
        version: number,
      });
    }
    if (event.compatibility !== pinned.compatibility)
      violations.push(modeChanged(event, pinned, input, base));
    const readerVersion = Math.max(...pinned.versions.keys());
    for (const writer of event.versions.filter((v) => v.version > readerVersion)) {
      pairsChecked++;
      const result = checkReadable(writer.bundled, pinned.reader, policy);
      for (const change of result.incompatibleChanges) {
        const labels = { new: `v${writer.version}`, old: `v${readerVersion}` };
        const { description, hint } = explain(change.type, change.path, 'forward', labels, policy);
        violations.push({
          ...base,
          file: schemaFile(writer.file),
          pointer: locatePath(writer.schema, change.path).pointer,
          path: change.path,
          code: change.type,
          message: `this repository's consumers read ${pinned.eventType} with v${readerVersion} (pinned from ${pins.source}) and cannot read v${writer.version}: ${description}`,
          hint: `${hint}; or deploy this consumer built with v${writer.version} before the producer writes it, then pin it again`,
          deployFirst: 'consumers',
          version: writer.version,
          against: readerVersion,
          direction: 'forward',
        });
      }
      if (result.compatible && !MODES[pinned.compatibility].directions.includes('forward'))
        notes.push(
          `${pinned.eventType} v${writer.version} is new in catalog ${input.name}: the deployed consumers (built with v${readerVersion}, mode ${pinned.compatibility}) dead-letter it until they are deployed with it; deploy them before the producer writes it`,
        );
    }
  }
  for (const event of catalog.events) {
    if (input.subscribed.has(event.eventType) && !pins.events.has(event.dir))
      notes.push(
        `${event.eventType} (catalog ${input.name}) is subscribed but not pinned in ${pins.file}: evgen check --update-lock pins it`,
      );
  }
  return { violations, notes, events, pairsChecked };
}

function modeChanged(
  event: EventDefinition,
  pinned: PinnedEvent,
  input: DependencyCheckInput,
  base: Pick<CompatibilityViolation, 'eventType' | 'mode' | 'policy'>,
): CompatibilityViolation {
  return {
    ...base,
    file: displayPath(join(input.catalog.root, event.dir, 'event.json')),
    pointer: '/compatibility',
    path: '#/',
    code: MODE_CHANGED_RULE,
    message: `the producer changed the compatibility mode of ${event.eventType} from ${pinned.compatibility} (pinned from ${input.pins.source}) to ${event.compatibility}: what it promises this repository's consumers changed`,
    hint: `agree on it with the producer; once the consumers can live with ${event.compatibility} (every new version is judged against their reader above), pin it again with evgen check --update-lock after deleting ${input.pins.file}`,
    deployFirst: 'none',
    version: event.versions.at(-1)?.version ?? 0,
  };
}
