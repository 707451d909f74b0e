/** Small shared pieces of the per-event targets: sources for headers, file paths. */
import type { EventDefinition } from '../../catalog/model.js';
import { eventModuleDir } from '../../common/naming.js';
import type { TargetFile } from '../target.js';

/** Catalog-relative paths an event's generated files come from: `event.json` and every version. */
export function eventSources(event: EventDefinition): string[] {
  return [`${event.dir}/event.json`, ...event.versions.map((version) => version.file)];
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
