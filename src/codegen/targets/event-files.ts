/** Small shared pieces of the per-event targets: sources for headers, file paths, formatting. */
import type { EventDefinition } from '../../catalog/model.js';
import { eventModuleDir } from '../naming.js';
import { formatTypeScript } from '../render/format.js';
import { generatedHeader } from '../render/header.js';
import type { GeneratedFile } from '../target.js';

/** Catalog-relative paths an event's generated files come from: `event.json` and every version. */
export function eventSources(event: EventDefinition): string[] {
  return [`${event.dir}/event.json`, ...event.versions.map((version) => version.file)];
}

/** Prepends the header, formats with prettier and places the file in the event's folder. */
export async function eventFile(
  event: EventDefinition,
  name: string,
  body: string,
  sources = eventSources(event),
): Promise<GeneratedFile> {
  return {
    path: `${eventModuleDir(event)}/${name}`,
    content: await formatTypeScript(`${generatedHeader(sources)}\n${body}`),
  };
}
