/**
 * Reads and validates an events folder into a Catalog. Every problem found is collected and
 * thrown together as one CatalogError; nothing is half-loaded.
 *
 * Layout: `<root>/<domain>/<EventName>/event.json` + `v<N>.schema.json` (N = 1.. without gaps).
 * Folders starting with `_` are not domains: `_common/` holds shared schemas, `_consumers/<name>.json`
 * declares consumers. Directory entries are read in sorted order so results never depend on the
 * file system.
 */
import type { CompiledSchemas } from './compiled-schemas.js';
import type { LoadedVersions } from './loaded-versions.js';
import { statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { CatalogError } from './catalog-error.js';
import { checkCrossEventRules } from './cross-event-rules.js';
import { readEventJson, kafkaEventTopic, pulsarEventTopic, type EventJson } from './event-json.js';
import { schemaFileVersion, versionListProblems } from './event-folder.js';
import {
  DEFAULT_EVENT_TYPE_FORMAT,
  eventTypeFormatProblem,
  formatEventType,
} from './event-type-format.js';
import { isHidden, refuseOddEntry, sortedEntries, unexpectedFile } from './folder-entries.js';
import { listConsumerFiles, loadConsumers } from './load-consumers.js';
import type { LoadContext } from './load-context.js';
import { loadVersion } from './load-version.js';
import { consumerJsonSchema, eventJsonSchema } from './metadata-schemas.js';
import type { Catalog, EventDefinition, EventVersion, KafkaWireFormat } from './model.js';
import { compareStrings } from '../common/json-value.js';
import { DOMAIN_NAME, EVENT_NAME, reservedDomainName, reservedEventName } from './name-rules.js';
import { ProblemList } from './problem-list.js';
import { displayPath } from './read-json-file.js';
import { SchemaCheckers } from './schema-dialect.js';
import { SchemaFiles } from './schema-files.js';

/** The released-versions lock `evgen check` keeps at the root of the events folder. */
export const RELEASE_LOCK_FILE = 'evgen.lock.json';
export interface LoadCatalogOptions {
  /** Template for event types not set in event.json (config `naming.eventType`), e.g. `{domain}.{event-name}`. */
  readonly eventTypeFormat?: string;
  /**
   * The catalog's Kafka wire format (config `wireFormat`, a catalog package's
   * `"evgen": {"wireFormat": …}`); default `json`. An event.json's `kafka.wireFormat` overrides it.
   */
  readonly wireFormat?: KafkaWireFormat;
  /** Schemas known to compile with this version of evgen (see `CompiledSchemas`). */
  readonly compiledSchemas?: CompiledSchemas;
  /** Versions an earlier run loaded (see `LoadedVersions`). */
  readonly loadedVersions?: LoadedVersions;
  /**
   * Events of the catalogs the repository depends on (each with `dependency` set): consumers may
   * subscribe to them, they must not clash with this folder's events, and they are part of the
   * loaded catalog (sorted in among the own events).
   */
  readonly dependencyEvents?: readonly EventDefinition[];
}

export async function loadCatalog(
  eventsDir: string,
  options: LoadCatalogOptions = {},
): Promise<Catalog> {
  const eventTypeFormat = options.eventTypeFormat ?? DEFAULT_EVENT_TYPE_FORMAT;
  const formatProblem = eventTypeFormatProblem(eventTypeFormat);
  if (formatProblem !== undefined)
    throw new TypeError(
      `invalid event type format ${JSON.stringify(eventTypeFormat)}: ${formatProblem}`,
    );
  const root = resolve(eventsDir);
  const problems = new ProblemList();
  let rootStat: Stats | undefined;
  try {
    rootStat = statSync(root);
  } catch {
    rootStat = undefined;
  }
  if (rootStat === undefined || !rootStat.isDirectory()) {
    throw new CatalogError([
      {
        code: 'catalog-missing',
        file: displayPath(root),
        pointer: '',
        message: 'the events folder does not exist or is not a folder',
        hint: 'pass --events DIR, set "events" in evgen.config.json, or create it with `evgen new <domain>/<EventName>`',
      },
    ]);
  }
  const checkers = new SchemaCheckers();
  const context: LoadContext = {
    root,
    problems,
    checkers,
    files: new SchemaFiles(problems, checkers),
    validateEventJson: checkers.metadataValidator(eventJsonSchema),
    validateConsumerJson: checkers.metadataValidator(consumerJsonSchema),
    declaredEventTypes: new Set(),
    eventTypeFormat,
    wireFormat: options.wireFormat ?? 'json',
    compiledSchemas: options.compiledSchemas,
    loadedVersions: options.loadedVersions,
  };

  const events: EventDefinition[] = [];
  let consumerFiles: string[] = [];
  for (const entry of sortedEntries(root)) {
    const path = join(root, entry.name);
    if (isHidden(entry.name) || refuseOddEntry(entry, path, context)) continue;
    if (entry.name === '_consumers' && entry.isDirectory()) {
      consumerFiles = await listConsumerFiles(path, context);
    } else if (entry.name.startsWith('_')) {
      continue; // _common and other shared folders: read when referenced
    } else if (entry.isDirectory()) {
      events.push(...(await loadDomain(entry.name, path, context)));
    } else if (entry.name === RELEASE_LOCK_FILE && entry.isFile()) {
      continue; // read by evgen check, not part of the catalog
    } else if (entry.name.endsWith('.json')) {
      unexpectedFile(path, 'move it into events/<domain>/<EventName>/ or events/_common/', context);
    }
  }

  const external = options.dependencyEvents ?? [];
  const all =
    external.length === 0
      ? events
      : [...events, ...external].sort(
          (a, b) => compareStrings(a.domain, b.domain) || compareStrings(a.name, b.name),
        );
  checkCrossEventRules(all, context);
  const consumers = await loadConsumers(consumerFiles, all, context);
  problems.throwIfAny();
  return { root, events: all, consumers };
}

async function loadDomain(
  domain: string,
  dir: string,
  context: LoadContext,
): Promise<EventDefinition[]> {
  let domainOk = true;
  if (!DOMAIN_NAME.test(domain)) {
    domainOk = false;
    context.problems.add({
      code: 'invalid-domain-name',
      file: displayPath(dir),
      pointer: '',
      message: `domain folder name ${JSON.stringify(domain)} is not lower-case kebab-case`,
      hint: 'rename the folder to match ^[a-z][a-z0-9-]*$, e.g. "order" or "order-payment"',
    });
  } else {
    const reserved = reservedDomainName(domain);
    if (reserved !== undefined) {
      domainOk = false;
      context.problems.add({
        code: 'reserved-name',
        file: displayPath(dir),
        pointer: '',
        message: `domain ${reserved}`,
        hint: 'rename the domain folder',
      });
    }
  }
  const events: EventDefinition[] = [];
  for (const entry of sortedEntries(dir)) {
    const path = join(dir, entry.name);
    if (isHidden(entry.name) || refuseOddEntry(entry, path, context)) continue;
    if (entry.isDirectory()) {
      const event = await loadEvent(domain, entry.name, path, context);
      if (event !== undefined && domainOk) events.push(event);
    } else if (entry.name.endsWith('.json')) {
      unexpectedFile(path, 'event files live in events/<domain>/<EventName>/', context);
    }
  }
  return events;
}

async function loadEvent(
  domain: string,
  name: string,
  dir: string,
  context: LoadContext,
): Promise<EventDefinition | undefined> {
  let ok = true;
  if (!EVENT_NAME.test(name)) {
    ok = false;
    context.problems.add({
      code: 'invalid-event-name',
      file: displayPath(dir),
      pointer: '',
      message: `event folder name ${JSON.stringify(name)} is not a PascalCase identifier`,
      hint: 'rename the folder to match ^[A-Z][A-Za-z0-9]*$, e.g. "OrderCreated"',
    });
  } else {
    const reserved = reservedEventName(name);
    if (reserved !== undefined) {
      ok = false;
      context.problems.add({
        code: 'reserved-name',
        file: displayPath(dir),
        pointer: '',
        message: `event name ${reserved}; generated code would shadow it`,
        hint: `rename the event folder, e.g. "${name}Recorded" or a name from your domain`,
      });
    }
  }

  const entries = sortedEntries(dir);
  const versionNumbers: number[] = [];
  let hasEventJson = false;
  for (const entry of entries) {
    if (isHidden(entry.name) || refuseOddEntry(entry, join(dir, entry.name), context)) continue;
    if (!entry.isFile()) continue;
    if (entry.name === 'event.json') hasEventJson = true;
    else {
      const version = schemaFileVersion(entry.name);
      if (version !== undefined) versionNumbers.push(version);
      else if (entry.name.endsWith('.json')) {
        unexpectedFile(
          join(dir, entry.name),
          'name payload schemas v1.schema.json, v2.schema.json, …; metadata goes in event.json',
          context,
        );
      }
    }
  }
  versionNumbers.sort((a, b) => a - b);

  let meta: EventJson | undefined;
  let aggregateId: string | undefined;
  const eventJsonPath = join(dir, 'event.json');
  if (!hasEventJson) {
    ok = false;
    context.problems.add({
      code: 'missing-event-json',
      file: displayPath(eventJsonPath),
      pointer: '',
      message: 'the event folder has no event.json',
      hint: 'create it (or scaffold the event with `evgen new <domain>/<EventName>`)',
    });
  } else {
    const read = await readEventJson(eventJsonPath, context);
    meta = read.meta;
    aggregateId = read.aggregateId;
    if (meta === undefined) ok = false;
  }

  const versionProblems = versionListProblems(dir, versionNumbers);
  if (versionProblems.length > 0) {
    ok = false;
    for (const problem of versionProblems) context.problems.add(problem);
  }

  const versions: EventVersion[] = [];
  for (const version of versionNumbers) {
    const loaded = await loadVersion(dir, version, aggregateId, context);
    if (loaded === undefined) ok = false;
    else versions.push(loaded);
  }
  const eventType = meta?.eventType ?? formatEventType(context.eventTypeFormat, domain, name);
  context.declaredEventTypes.add(eventType);
  if (!ok || meta === undefined) return undefined;
  return {
    domain,
    name,
    eventType,
    description: meta.description,
    aggregate: meta.aggregate,
    aggregateId: meta.aggregateId,
    compatibility: meta.compatibility ?? 'FULL_TRANSITIVE',
    policy: meta.policy ?? 'evgen',
    ...(meta.kafka === undefined ? {} : { kafka: kafkaEventTopic(meta.kafka, context.wireFormat) }),
    ...(meta.ordering === undefined ? {} : { ordering: meta.ordering }),
    ...(meta.rabbitmq === undefined
      ? {}
      : { rabbitmq: { exchange: meta.rabbitmq.exchange, routingKey: meta.rabbitmq.routingKey } }),
    ...(meta.pulsar === undefined ? {} : { pulsar: pulsarEventTopic(meta.pulsar) }),
    dir: `${domain}/${name}`,
    versions,
  };
}
