/**
 * `registry pull` as files: the subjects evgen pushed, read back into an events folder that
 * `evgen build` accepts. Pure: the registry's subjects and versions in, file texts out.
 *
 * Each subject becomes `<folder>/event.json` (the event.json of its newest version's annotation)
 * and `<folder>/v<N>.schema.json` (the payload schema as bundled: self-contained, no `_common`
 * references). Every pulled version is released (the registry holds it, so some producer may
 * write it): they all go into the lock, so the consumer's `evgen check` pins them.
 */
import type { SubjectVersion } from '../runtime/registry/schema-registry-client.js';
import { versionHash } from '../compat/release-lock.js';
import { readRegisteredSchema } from './registered-schema.js';

export interface PulledCatalog {
  /** Path relative to the events folder → file text. */
  readonly files: ReadonlyMap<string, string>;
  /** Event folder → version → hash, for the lock. */
  readonly released: ReadonlyMap<string, ReadonlyMap<number, string>>;
  /** Subjects left out, with why (not pushed by evgen). */
  readonly skipped: readonly string[];
  /** What makes the pull refuse (a subject whose versions are not v1…vN of one event). */
  readonly problems: readonly string[];
}

const fileText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export function pulledCatalog(
  subjects: readonly { readonly subject: string; readonly versions: readonly SubjectVersion[] }[],
): PulledCatalog {
  const files = new Map<string, string>();
  const released = new Map<string, Map<number, string>>();
  const skipped: string[] = [];
  const problems: string[] = [];
  const folders = new Map<string, string>();
  for (const { subject, versions } of subjects) {
    const read = versions.map((version) => readRegisteredSchema(version.schema));
    const foreign = read.findIndex((entry) => typeof entry === 'string');
    if (foreign !== -1) {
      skipped.push(`${subject}: version ${versions[foreign]!.version} ${read[foreign] as string}`);
      continue;
    }
    const schemas = read as Exclude<(typeof read)[number], string>[];
    const first = schemas[0];
    if (first === undefined) continue;
    const { eventType, folder } = first.annotation;
    const wrong = schemas.findIndex(
      (entry, index) =>
        entry.annotation.eventType !== eventType ||
        entry.annotation.folder !== folder ||
        entry.annotation.version !== index + 1,
    );
    if (wrong !== -1) {
      problems.push(
        `subject ${subject}: version ${versions[wrong]!.version} is ${schemas[wrong]!.annotation.eventType} v${schemas[wrong]!.annotation.version}, expected ${eventType} v${wrong + 1} (its versions must be v1…vN of one event, as evgen registry push writes them)`,
      );
      continue;
    }
    const other = folders.get(folder);
    if (other !== undefined) {
      problems.push(`subjects ${other} and ${subject} both hold ${eventType} (${folder})`);
      continue;
    }
    folders.set(folder, subject);
    files.set(`${folder}/event.json`, fileText(schemas.at(-1)!.annotation.event));
    const hashes = new Map<number, string>();
    for (const entry of schemas) {
      files.set(`${folder}/v${entry.annotation.version}.schema.json`, fileText(entry.payload));
      hashes.set(entry.annotation.version, versionHash(entry.payload));
    }
    released.set(folder, hashes);
  }
  return { files, released, skipped, problems };
}
