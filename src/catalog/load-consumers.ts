/**
 * `_consumers/<name>.json`: who subscribes to which events. Loaded after the events, so a
 * subscription to an unknown event type is reported with the closest known one, and one to an
 * event that is itself broken is not reported twice.
 */
import { join } from 'node:path';
import { compareStrings } from '../common/json-value.js';
import { suggestion } from './did-you-mean.js';
import { isHidden, refuseOddEntry, sortedEntries, unexpectedFile } from './folder-entries.js';
import type { LoadContext } from './load-context.js';
import { CONSUMER_JSON_KEYS } from './metadata-schemas.js';
import type { ConsumerDefinition, EventDefinition } from './model.js';
import { CONSUMER_NAME } from './name-rules.js';
import { displayPath, readJsonFile } from './read-json-file.js';

export async function listConsumerFiles(dir: string, context: LoadContext): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await sortedEntries(dir)) {
    const path = join(dir, entry.name);
    if (isHidden(entry.name) || refuseOddEntry(entry, path, context)) continue;
    if (entry.isFile() && entry.name.endsWith('.json')) files.push(path);
    else unexpectedFile(path, 'consumers are declared as events/_consumers/<name>.json', context);
  }
  return files;
}

export async function loadConsumers(
  files: readonly string[],
  events: readonly EventDefinition[],
  context: LoadContext,
): Promise<ConsumerDefinition[]> {
  const eventTypes = events.map((event) => event.eventType);
  const declaredTypes = context.declaredEventTypes;
  const consumers: ConsumerDefinition[] = [];
  for (const path of files) {
    const file = displayPath(path);
    const name = path.slice(path.lastIndexOf('/') + 1, -'.json'.length);
    let ok = true;
    if (!CONSUMER_NAME.test(name)) {
      ok = false;
      context.problems.add({
        code: 'invalid-consumer-name',
        file,
        pointer: '',
        message: `consumer name ${JSON.stringify(name)} is not kebab-case`,
        hint: 'rename the file to match ^[a-z][a-z0-9]*(-[a-z0-9]+)*\\.json$, e.g. "shipping-service.json"',
      });
    }
    const read = await readJsonFile(path, context.problems);
    if (!read.ok) continue;
    if (!context.validateConsumerJson(read.value)) {
      for (const error of context.validateConsumerJson.errors ?? []) {
        const params = error.params as Record<string, unknown>;
        const unknownKey =
          error.keyword === 'additionalProperties' ? String(params.additionalProperty) : undefined;
        context.problems.add(
          unknownKey !== undefined
            ? {
                code: 'unknown-key',
                file,
                pointer: `/${unknownKey}`,
                message: `unknown key ${JSON.stringify(unknownKey)}`,
                hint: suggestion(
                  unknownKey,
                  CONSUMER_JSON_KEYS,
                  'remove it; allowed keys: description, subscribes',
                ),
              }
            : {
                code: 'invalid-consumer',
                file,
                pointer: error.instancePath,
                message:
                  error.keyword === 'required'
                    ? `missing required key "${String(params.missingProperty)}"`
                    : (error.message ?? error.keyword),
                hint: 'a consumer file is {"description": "...", "subscribes": ["<domain>.<EventName>", ...]}',
              },
        );
      }
      continue;
    }
    const declared = read.value as { description: string; subscribes: string[] };
    declared.subscribes.forEach((eventType, index) => {
      if (eventTypes.includes(eventType)) return;
      ok = false;
      if (declaredTypes.has(eventType)) return; // the event itself is broken and already reported
      context.problems.add({
        code: 'consumer-unknown-event',
        file,
        pointer: `/subscribes/${index}`,
        message: `subscribes to unknown event type ${JSON.stringify(eventType)}`,
        hint: suggestion(
          eventType,
          eventTypes,
          `use one of the catalog's event types: ${[...eventTypes].sort().join(', ')}`,
        ),
      });
    });
    if (ok) {
      consumers.push({
        name,
        description: declared.description,
        file: `_consumers/${name}.json`,
        subscribes: [...declared.subscribes].sort(compareStrings),
      });
    }
  }
  return consumers.sort((a, b) => compareStrings(a.name, b.name));
}
