/**
 * Registers every version of one of the repository catalog's events (`events/<dir>`) exactly as
 * `evgen registry push` would, under a subject of the test's own (`<marker>-<eventType>`), removed
 * after the test. The interop tests frame and read the example catalog's generated records with it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCatalog } from '../../../src/catalog/load-catalog.js';
import { registeredSchema } from '../../../src/registry/registered-schema.js';
import type { RegistryTests } from './registry-tests.js';

const EVENTS = join(import.meta.dirname, '../../../events');

export interface RegisteredExampleEvent {
  readonly subject: string;
  /** The registry's schema ids, by version (index 0 is v1). */
  readonly ids: number[];
}

export async function registerExampleEvent(
  tests: RegistryTests,
  dir: string,
  marker: string,
): Promise<RegisteredExampleEvent> {
  const catalog = await loadCatalog(EVENTS);
  const event = catalog.events.find((e) => e.dir === dir);
  if (event === undefined) throw new Error(`no event folder events/${dir} in the example catalog`);
  const eventJson = JSON.parse(await readFile(join(EVENTS, dir, 'event.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const subject = `${marker}-${event.eventType}`;
  tests.afterwards(() => tests.registry.cleanup(subject));
  const ids: number[] = [];
  for (const version of event.versions)
    ids.push(
      await tests.registry.client.register(
        subject,
        registeredSchema(event, version, eventJson).text,
      ),
    );
  return { subject, ids };
}
