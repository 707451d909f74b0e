/**
 * `registry push` as a plan, decided before anything is written: which subjects get which level,
 * which versions are registered, which are already there, and what makes the push refuse.
 * Pure: the catalog's wanted state and the registry's current state in, the plan out.
 *
 * A subject's registered versions correspond to the event's versions by position (the registry's
 * first version is evgen's v1, …), because push registers them in version order, one subject per
 * event type. So:
 *   - a version the registry holds with the same payload schema is left alone (its id is kept;
 *     formatting and the annotation do not count);
 *   - a version the registry holds with a DIFFERENT schema refuses the whole push: for a released
 *     version that is a changed release; for an unreleased one, a draft pushed earlier;
 *   - a subject holding more versions than the catalog, or another event type, refuses too;
 *   - the rest is registered, in version order.
 */
import type { Catalog, CompatibilityMode, EventDefinition } from '../catalog/model.js';
import type { LockedVersions } from '../compat/release-lock.js';
import { canonicalJson } from '../common/canonical-json.js';
import type { SubjectVersion } from '../runtime/registry/schema-registry-client.js';
import { readRegisteredSchema, registeredSchema, samePayload } from './registered-schema.js';
import { subjectName, type SubjectNameStrategy } from '../runtime/registry/subject-name.js';

export interface WantedVersion {
  readonly version: number;
  readonly text: string;
  readonly payload: unknown;
  readonly released: boolean;
}

/** What the catalog wants one subject to hold. */
export interface WantedSubject {
  readonly subject: string;
  readonly event: EventDefinition;
  readonly level: CompatibilityMode;
  readonly eventJson: Readonly<Record<string, unknown>>;
  readonly versions: readonly WantedVersion[];
}

export interface SubjectPlan {
  readonly subject: string;
  readonly eventType: string;
  readonly level: CompatibilityMode;
  /** Already registered with the same payload schema: version → id. */
  readonly unchanged: readonly { readonly version: number; readonly id: number }[];
  readonly register: readonly WantedVersion[];
  /** event.json differs from the annotation of the newest registered version (pull would get the old one). */
  readonly staleMetadata: boolean;
}

export interface PushRefusal {
  readonly subject: string;
  readonly code:
    | 'released-version-differs'
    | 'registered-draft-differs'
    | 'registry-ahead'
    | 'foreign-subject'
    | 'shared-subject';
  readonly message: string;
  readonly hint: string;
}

export interface PushPlan {
  readonly subjects: readonly SubjectPlan[];
  readonly refusals: readonly PushRefusal[];
  /** Events left out, with why (a topic strategy and no Kafka topic). */
  readonly skipped: readonly string[];
}

/**
 * The subjects the catalog wants under `strategy`. Refusals here: two event types mapping to one
 * subject (TopicNameStrategy on a shared topic).
 */
export function wantedSubjects(
  catalog: Catalog,
  eventJsons: ReadonlyMap<string, Readonly<Record<string, unknown>>>,
  strategy: SubjectNameStrategy,
  lock: LockedVersions | undefined,
): { wanted: WantedSubject[]; refusals: PushRefusal[]; skipped: string[] } {
  const wanted: WantedSubject[] = [];
  const refusals: PushRefusal[] = [];
  const skipped: string[] = [];
  const owners = new Map<string, string>();
  for (const event of catalog.events) {
    const subject = subjectName(strategy, {
      eventType: event.eventType,
      topic: event.kafka?.topic,
    });
    if (subject === undefined) {
      skipped.push(`${event.eventType}: no Kafka topic, and ${strategy} names subjects by topic`);
      continue;
    }
    const owner = owners.get(subject);
    if (owner !== undefined) {
      refusals.push({
        subject,
        code: 'shared-subject',
        message: `${owner} and ${event.eventType} would share subject ${subject} under ${strategy}: their versions would be checked against each other`,
        hint: 'use RecordNameStrategy (the default) or TopicRecordNameStrategy for topics that carry several event types',
      });
      continue;
    }
    owners.set(subject, event.eventType);
    const eventJson = eventJsons.get(event.dir) ?? {};
    const released = lock?.get(event.dir);
    wanted.push({
      subject,
      event,
      level: event.compatibility,
      eventJson,
      versions: event.versions.map((version) => ({
        version: version.version,
        text: registeredSchema(event, version, eventJson).text,
        payload: version.bundled,
        released: released?.has(version.version) ?? false,
      })),
    });
  }
  return { wanted, refusals, skipped };
}

/** Plans one subject against what the registry holds (undefined: no such subject yet). */
export function planSubject(
  wanted: WantedSubject,
  registered: readonly SubjectVersion[] | undefined,
): SubjectPlan | PushRefusal {
  const { subject, event } = wanted;
  const held = registered ?? [];
  if (held.length > wanted.versions.length) {
    return {
      subject,
      code: 'registry-ahead',
      message: `subject ${subject} holds ${held.length} versions, the catalog has ${wanted.versions.length} of ${event.eventType}`,
      hint: 'pull the newer versions into the catalog (evgen registry pull) or push from the repository that owns them',
    };
  }
  const unchanged: { version: number; id: number }[] = [];
  for (const [index, version] of held.entries()) {
    const want = wanted.versions[index]!;
    const read = readRegisteredSchema(version.schema);
    if (typeof read === 'string' || read.annotation.eventType !== event.eventType) {
      return {
        subject,
        code: 'foreign-subject',
        message: `subject ${subject} version ${version.version} is not ${event.eventType} v${want.version}: ${typeof read === 'string' ? read : `it is ${read.annotation.eventType}`}`,
        hint: 'choose another subject name strategy, or delete the subject in the registry if it is a leftover',
      };
    }
    if (!samePayload(version.schema, want.payload as never)) {
      return want.released
        ? {
            subject,
            code: 'released-version-differs',
            message: `${event.eventType} v${want.version} is released, and subject ${subject} version ${version.version} (id ${version.id}) holds a different schema`,
            hint: 'a released version never changes: add a new version with the change instead (evgen new version)',
          }
        : {
            subject,
            code: 'registered-draft-differs',
            message: `${event.eventType} v${want.version} is not released yet, but subject ${subject} version ${version.version} (id ${version.id}) holds an earlier draft of it`,
            hint: `delete that draft in the registry (DELETE /subjects/${subject}/versions/${version.version}, then ?permanent=true) and push again`,
          };
    }
    unchanged.push({ version: want.version, id: version.id });
  }
  const register = wanted.versions.slice(held.length);
  const newest = held.at(-1);
  const newestRead = newest === undefined ? undefined : readRegisteredSchema(newest.schema);
  const staleMetadata =
    register.length === 0 &&
    typeof newestRead === 'object' &&
    canonicalJson(newestRead.annotation.event) !== canonicalJson(wanted.eventJson);
  return {
    subject,
    eventType: event.eventType,
    level: wanted.level,
    unchanged,
    register,
    staleMetadata,
  };
}

export function isRefusal(plan: SubjectPlan | PushRefusal): plan is PushRefusal {
  return 'code' in plan;
}

/** Lines of the plan as `push --dry-run` and `push` print them. */
export function describePlan(plan: PushPlan): string[] {
  const lines: string[] = [];
  for (const subject of plan.subjects) {
    lines.push(`${subject.subject} (${subject.eventType}): level ${subject.level}`);
    for (const kept of subject.unchanged)
      lines.push(`  v${kept.version} already registered (id ${kept.id})`);
    for (const version of subject.register) lines.push(`  v${version.version} register`);
    if (subject.staleMetadata)
      lines.push(
        '  note: event.json changed since the newest version was pushed; pull reads the metadata of the newest version, so the change reaches the registry with the next version',
      );
  }
  for (const skipped of plan.skipped) lines.push(`skipped ${skipped}`);
  return lines;
}
