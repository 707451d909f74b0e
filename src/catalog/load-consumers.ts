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
import { BROKER_TRANSPORTS, eventTransports, TRANSPORT_LABELS } from './event-transports.js';
import {
  CONSUMER_IN_ORDER_MODES,
  type ConsumerDefinition,
  type ConsumerInOrderMode,
  type EventDefinition,
} from './model.js';
import { CONSUMER_NAME } from './name-rules.js';
import { displayPath, readJsonFile } from './read-json-file.js';
import { seeDocs } from './doc-sections.js';

export async function listConsumerFiles(dir: string, context: LoadContext): Promise<string[]> {
  const files: string[] = [];
  for (const entry of sortedEntries(dir)) {
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
                  `remove it; allowed keys: ${CONSUMER_JSON_KEYS.filter((k) => k !== '$schema').join(', ')}`,
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
                hint:
                  error.instancePath === '/inOrder'
                    ? `use one of ${CONSUMER_IN_ORDER_MODES.join(', ')} (${seeDocs('ordering')})`
                    : 'a consumer file is {"description": "...", "subscribes": ["<domain>.<EventName>", ...]}',
              },
        );
      }
      continue;
    }
    const declared = read.value as {
      description: string;
      subscribes: string[];
      inOrder?: ConsumerInOrderMode;
    };
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
          eventTypes.length === 0
            ? 'the catalog has no events yet: create one with `evgen new <domain>/<EventName>` (or read another catalog with `catalogs` in evgen.config.json)'
            : `use one of the catalog's event types: ${[...eventTypes].sort().join(', ')}`,
        ),
      });
    });
    if (ok) ok = sharesTransport(file, declared.subscribes, events, context);
    if (ok && declared.inOrder === 'every-version')
      ok = everyVersionArrives(file, declared.subscribes, events, context);
    if (ok) {
      consumers.push({
        name,
        description: declared.description,
        file: `_consumers/${name}.json`,
        subscribes: [...declared.subscribes].sort(compareStrings),
        ...(declared.inOrder === undefined ? {} : { inOrder: declared.inOrder }),
      });
    }
  }
  return consumers.sort((a, b) => compareStrings(a.name, b.name));
}

/**
 * A consumer runs over one broker, so the events it subscribes to must all be published on at
 * least one common transport: one event only on Kafka and another only on RabbitMQ could never
 * both reach it. Events on no broker at all (in-process only) constrain nothing.
 */
function sharesTransport(
  file: string,
  subscribes: readonly string[],
  events: readonly EventDefinition[],
  context: LoadContext,
): boolean {
  const subscribed = subscribes
    .map((eventType, index) => ({ index, event: events.find((e) => e.eventType === eventType)! }))
    .filter(({ event }) => eventTransports(event).length > 0);
  const common = BROKER_TRANSPORTS.filter((transport) =>
    subscribed.every(({ event }) => event[transport] !== undefined),
  );
  if (subscribed.length === 0 || common.length > 0) return true;
  const first = subscribed[0]!;
  const firstTransports = eventTransports(first.event);
  const other = subscribed.find(({ event }) =>
    firstTransports.every((transport) => event[transport] === undefined),
  )!;
  const on = (event: EventDefinition) =>
    eventTransports(event)
      .map((transport) => TRANSPORT_LABELS[transport])
      .join(' and ');
  context.problems.add({
    code: 'consumer-transports-disjoint',
    file,
    pointer: `/subscribes/${other.index}`,
    message: `subscribes to ${JSON.stringify(other.event.eventType)} (only on ${on(other.event)}) and ${JSON.stringify(first.event.eventType)} (only on ${on(first.event)}): no broker carries both`,
    hint: `declare the missing transport block in one event's event.json, or split the consumer into one per broker (${seeDocs('transports')})`,
  });
  return false;
}

/**
 * `"inOrder": "every-version"` applies each version of an aggregate right after the one before.
 * Over RabbitMQ only the subscribed routing keys arrive, so a consumer of some of an aggregate's
 * event types would wait for ever on the versions carried by the others (every later version a
 * gap). Refused there unless it subscribes to all of them; Kafka hands every record of the
 * aggregate's partition to the consumer, so skipped ones still advance the version.
 */
function everyVersionArrives(
  file: string,
  subscribes: readonly string[],
  events: readonly EventDefinition[],
  context: LoadContext,
): boolean {
  const subscribed = new Set(subscribes);
  const overRabbit = events.filter((e) => subscribed.has(e.eventType) && e.rabbitmq !== undefined);
  const aggregates = [...new Set(overRabbit.map((e) => e.aggregate))].sort(compareStrings);
  let ok = true;
  for (const aggregate of aggregates) {
    const missing = events
      .filter((e) => e.aggregate === aggregate && !subscribed.has(e.eventType))
      .map((e) => e.eventType)
      .sort(compareStrings);
    if (missing.length === 0) continue;
    ok = false;
    context.problems.add({
      code: 'consumer-in-order-gaps',
      file,
      pointer: '/inOrder',
      message: `applies ${aggregate} events in every-version order over RabbitMQ but does not subscribe to ${missing.map((t) => JSON.stringify(t)).join(', ')}: their versions never arrive, so each later version of the ${aggregate} would wait as a gap`,
      hint: `set "inOrder": "allow-gaps" (newer versions apply, older ones are skipped), subscribe to every ${aggregate} event, or publish them on Kafka only (no "rabbitmq" block), where skipped records still advance the version (${seeDocs('ordering')})`,
    });
  }
  return ok;
}
