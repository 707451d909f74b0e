/** Small shared pieces of the targets: sources for headers, file paths, relative imports. */
import { posix } from 'node:path';
import type { EventDefinition } from '../../catalog/model.js';
import { eventModuleDir } from '../../common/naming.js';
import type { TargetFile } from '../target.js';

/** Catalog-relative path of an event's `event.json` (a source of every file routing it). */
export function eventJson(event: EventDefinition): string {
  return `${event.dir}/event.json`;
}

/** Catalog-relative paths an event's generated files come from: `event.json` and every version. */
export function eventSources(event: EventDefinition): string[] {
  return [eventJson(event), ...event.versions.map((version) => version.file)];
}

/** The specifier a generated file at `fromFile` imports `toFile` with (both in generated/). */
export function relativeImport(fromFile: string, toFile: string): string {
  const relative = posix.relative(posix.dirname(fromFile), toFile);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

/** A file in the event's folder, generated from the event's sources. */
export function eventFile(
  event: EventDefinition,
  name: string,
  body: string,
  sources = eventSources(event),
): TargetFile {
  return { path: `${eventModuleDir(event)}/${name}`, body, sources };
}
