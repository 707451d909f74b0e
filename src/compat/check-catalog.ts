/**
 * Checks a catalog's evolution. Without `against`: every version of every event against the
 * earlier versions its mode names. With `against` (the catalog as released, e.g. at a git ref):
 * released versions must be unchanged (canonical JSON of the bundled schema, so an edited shared
 * schema counts too) and present; only versions new since then are checked per mode.
 * Every violation is reported, never only the first.
 */
import { join } from 'node:path';
import type {
  Catalog,
  CompatibilityPolicy,
  EventDefinition,
  EventVersion,
} from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { canonicalJson } from '../common/canonical-json.js';
import { checkReadable, ComparisonSession, type SchemaDiffResult } from './diff-schemas.js';
import { locatePath } from './locate-path.js';
import { MODES, versionsToCheckAgainst, type Direction } from './modes.js';
import { explain } from './rules/hints.js';
import { ComparisonLimitError, ComparisonProblem } from './comparison-problem.js';
import { versionHash, type ReleaseLock } from './release-lock.js';
import { SchemaInputError } from './schema-document.js';
import { UNJUDGED_HINT, UnjudgedChangeError } from './unjudged-change.js';
import {
  compareViolations,
  IMMUTABILITY_RULES,
  type CompatibilityViolation,
  type DeployOrder,
} from './violation.js';

export interface CheckCatalogOptions {
  /** The released catalog; versions in it are immutable. */
  readonly against?: Catalog;
  /** Overrides every event's own policy. */
  readonly policy?: CompatibilityPolicy;
  /** The released-versions lock; a locked version must be present and hash the same. */
  readonly lock?: ReleaseLock;
}

export interface CatalogCheckReport {
  readonly ok: boolean;
  readonly violations: readonly CompatibilityViolation[];
  /** Events looked at, and (new version, earlier version) pairs compared. */
  readonly events: number;
  readonly pairsChecked: number;
}

function deployOrder(backward: SchemaDiffResult, forward: SchemaDiffResult): DeployOrder {
  if (backward.compatible && !forward.compatible) return 'consumers';
  if (!backward.compatible && forward.compatible) return 'producers';
  return 'none';
}

function comparePair(
  event: EventDefinition,
  older: EventVersion,
  newer: EventVersion,
  policy: CompatibilityPolicy,
  file: string,
  session: ComparisonSession,
): { backward: SchemaDiffResult; forward: SchemaDiffResult } {
  let direction: Direction = 'backward';
  try {
    const backward = checkReadable(older.bundled, newer.bundled, policy, { session });
    direction = 'forward';
    return { backward, forward: checkReadable(newer.bundled, older.bundled, policy, { session }) };
  } catch (error) {
    if (error instanceof ComparisonLimitError)
      throw new ComparisonProblem({
        file,
        pointer: locatePath(newer.schema, error.path).pointer,
        code: 'too-complex',
        message: `${error.message.replace(/ at #.*$/, '')} — comparing v${newer.version} with v${older.version} of ${event.eventType}`,
        hint: 'simplify the schema (fewer alternatives in anyOf/oneOf, shorter $ref chains), or split the event',
      });
    if (error instanceof UnjudgedChangeError)
      throw new ComparisonProblem({
        file,
        pointer: locatePath(newer.schema, error.path).pointer,
        code: 'unjudged-change',
        message: `evgen cannot judge changes to "${error.keyword}" — comparing v${newer.version} with v${older.version} of ${event.eventType} (${direction}: policy evgen compares by meaning and will not guess whether ${direction === 'backward' ? `v${newer.version}` : `v${older.version}`} readers still accept every value the other version's writers send)`,
        hint: UNJUDGED_HINT,
      });
    if (error instanceof SchemaInputError)
      throw new ComparisonProblem({
        file,
        pointer: '',
        code: 'schema-input',
        message: `v${newer.version} vs v${older.version} of ${event.eventType}: ${error.message}`,
        hint: 'fix the reference or keyword named in the message',
      });
    throw error;
  }
}

function checkVersion(
  event: EventDefinition,
  newer: EventVersion,
  baseline: readonly EventVersion[],
  root: string,
  policy: CompatibilityPolicy,
  violations: CompatibilityViolation[],
  session: ComparisonSession,
): number {
  const earlier = baseline.filter((version) => version.version < newer.version);
  const file = displayPath(join(root, newer.file));
  const mode = event.compatibility;
  let pairs = 0;
  for (const older of versionsToCheckAgainst(earlier, mode)) {
    pairs++;
    const results = comparePair(event, older, newer, policy, file, session);
    const order = deployOrder(results.backward, results.forward);
    for (const direction of MODES[mode].directions) {
      for (const change of results[direction].incompatibleChanges) {
        const { description, hint } = explain(
          change.type,
          change.path,
          direction,
          { new: `v${newer.version}`, old: `v${older.version}` },
          policy,
        );
        violations.push({
          file,
          // The path may name what only the older version has (a removed property): point at
          // the deepest place of it that exists in the file being checked.
          pointer: locatePath(newer.schema, change.path).pointer,
          path: change.path,
          code: change.type,
          message: description,
          hint,
          deployFirst: order,
          eventType: event.eventType,
          version: newer.version,
          against: older.version,
          direction,
          mode,
          policy,
        });
      }
    }
  }
  return pairs;
}

export function checkCatalog(
  catalog: Catalog,
  options: CheckCatalogOptions = {},
): CatalogCheckReport {
  const violations: CompatibilityViolation[] = [];
  let pairsChecked = 0;
  const released = new Map((options.against?.events ?? []).map((event) => [event.dir, event]));

  for (const event of catalog.events) {
    const policy = options.policy ?? event.policy;
    const before = released.get(event.dir);
    // An event's versions meet in several pairs: their views are computed once.
    const session = new ComparisonSession();
    const baseline = baselineVersions(event, before, options.lock);
    for (const version of event.versions) {
      const previous = before?.versions.find((candidate) => candidate.version === version.version);
      if (previous !== undefined) {
        if (canonicalJson(previous.bundled) !== canonicalJson(version.bundled)) {
          violations.push(
            immutability('RELEASED_VERSION_CHANGED', event, version, catalog.root, policy),
          );
        }
        continue;
      }
      pairsChecked += checkVersion(
        event,
        version,
        baseline,
        catalog.root,
        policy,
        violations,
        session,
      );
    }
  }
  const current = new Map(catalog.events.map((event) => [event.dir, event]));
  for (const event of options.against?.events ?? []) {
    for (const version of event.versions) {
      if (
        current
          .get(event.dir)
          ?.versions.some((candidate) => candidate.version === version.version) === true
      )
        continue;
      violations.push(
        immutability(
          'RELEASED_VERSION_DELETED',
          event,
          version,
          catalog.root,
          options.policy ?? event.policy,
        ),
      );
    }
  }
  if (options.lock !== undefined) violations.push(...lockViolations(catalog, options, violations));
  violations.sort(compareViolations);
  return { ok: violations.length === 0, violations, events: catalog.events.length, pairsChecked };
}

/**
 * The earlier versions new ones are checked against: each released version as it was released,
 * not as edited since (the edit is reported once, as RELEASED_VERSION_CHANGED, and must not make
 * a new version look incompatible). A version the lock says changed, without the released text
 * at hand, is left out.
 */
function baselineVersions(
  event: EventDefinition,
  released: EventDefinition | undefined,
  lock: ReleaseLock | undefined,
): readonly EventVersion[] {
  const locked = lock?.events.get(event.dir);
  return event.versions.flatMap((version) => {
    const asReleased = released?.versions.find(
      (candidate) => candidate.version === version.version,
    );
    if (asReleased !== undefined) return [asReleased];
    const hash = locked?.get(version.version);
    if (hash !== undefined && versionHash(version.bundled) !== hash) return [];
    return [version];
  });
}

/**
 * Locked versions that changed or disappeared. A version `--against` already reported is not
 * reported twice; versions not in the lock are left to `--against` and the per-mode checks.
 */
function lockViolations(
  catalog: Catalog,
  options: CheckCatalogOptions,
  already: readonly CompatibilityViolation[],
): CompatibilityViolation[] {
  const lock = options.lock!;
  const reported = new Set(already.filter(isImmutability).map((v) => `${v.file}@${v.version}`));
  const byDir = new Map(catalog.events.map((event) => [event.dir, event]));
  const found: CompatibilityViolation[] = [];
  for (const [dir, versions] of lock.events) {
    const event = byDir.get(dir);
    for (const [number, hash] of versions) {
      const version = event?.versions.find((candidate) => candidate.version === number);
      const policy = options.policy ?? event?.policy ?? 'evgen';
      let violation: CompatibilityViolation;
      if (event === undefined || version === undefined) {
        const file = `${dir}/v${number}.schema.json`;
        violation = immutability(
          'RELEASED_VERSION_DELETED',
          event ?? { eventType: dir, compatibility: 'FULL_TRANSITIVE', versions: [] },
          { version: number, file },
          catalog.root,
          policy,
          lock.file,
        );
      } else if (versionHash(version.bundled) !== hash) {
        violation = immutability(
          'RELEASED_VERSION_CHANGED',
          event,
          version,
          catalog.root,
          policy,
          lock.file,
        );
      } else continue;
      if (!reported.has(`${violation.file}@${number}`)) found.push(violation);
    }
  }
  return found;
}

function isImmutability(violation: CompatibilityViolation): boolean {
  return (IMMUTABILITY_RULES as readonly string[]).includes(violation.code);
}

function immutability(
  rule: (typeof IMMUTABILITY_RULES)[number],
  event: Pick<EventDefinition, 'eventType' | 'compatibility' | 'versions'>,
  version: Pick<EventVersion, 'version' | 'file'>,
  root: string,
  policy: CompatibilityPolicy,
  lockFile?: string,
): CompatibilityViolation {
  const changed = rule === 'RELEASED_VERSION_CHANGED';
  const source = lockFile === undefined ? '' : ` (locked in ${lockFile})`;
  return {
    file: displayPath(join(root, version.file)),
    pointer: '',
    path: '#/',
    code: rule,
    message: changed
      ? `v${version.version} of ${event.eventType} was released${source} and has changed (including schemas it references)`
      : `v${version.version} of ${event.eventType} was released${source} and has been deleted`,
    hint: changed
      ? `released versions are immutable: revert the edit and add v${event.versions.length + 1} with the change`
      : 'restore the file: data and consumers may still use this version; retire it by adding a new version instead',
    deployFirst: 'none',
    eventType: event.eventType,
    version: version.version,
    mode: event.compatibility,
    policy,
  };
}
