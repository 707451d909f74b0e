/**
 * Reads and validates an events folder into a Catalog. Every problem found is collected and
 * thrown together as one CatalogError; nothing is half-loaded.
 *
 * Layout: `<root>/<domain>/<EventName>/event.json` + `v<N>.schema.json` (N = 1.. without gaps).
 * Folders starting with `_` are not domains: `_common/` holds shared schemas, `_consumers/<name>.json`
 * declares consumers. Directory entries are read in sorted order so results never depend on the
 * file system.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  DEFAULT_EVENT_TYPE_FORMAT,
  eventTypeFormatProblem,
  formatEventType,
} from './event-type-format.js';
import { CatalogError, type CatalogProblem } from './catalog-error.js';
import { bundleSchema } from './bundle-schema.js';
import { suggestion } from './did-you-mean.js';
import { pointerSegment, resolvePointer } from '../common/json-pointer.js';
import {
  CONSUMER_JSON_KEYS,
  consumerJsonSchema,
  EVENT_JSON_KEYS,
  eventJsonSchema,
  KAFKA_JSON_KEYS,
  MAX_KAFKA_PARTITIONS,
} from './metadata-schemas.js';
import {
  COMPATIBILITY_MODES,
  COMPATIBILITY_POLICIES,
  DEFAULT_KAFKA_PARTITIONS,
  DEFAULT_KAFKA_RETENTION_MS,
  EVENT_ORDERINGS,
  KAFKA_CLEANUP_POLICIES,
  type Catalog,
  type CompatibilityMode,
  type CompatibilityPolicy,
  type ConsumerDefinition,
  type EventDefinition,
  type EventOrdering,
  type EventVersion,
  type JsonSchema,
  type KafkaEventTopic,
} from './model.js';
import {
  CONSUMER_NAME,
  DOMAIN_NAME,
  EVENT_NAME,
  generatedNames,
  reservedDomainName,
  reservedEventName,
} from './name-rules.js';
import { ProblemList } from './problem-list.js';
import { displayPath, readJsonFile } from './read-json-file.js';
import { SchemaCheckers } from './schema-dialect.js';
import { SchemaFiles } from './schema-files.js';
import { eventNames, pascalCase, versionNames } from '../common/naming.js';
import { checkAggregateId } from './check-aggregate-id.js';
import { schemaFileVersion, versionListProblems } from './event-folder.js';
import { compareStrings } from '../common/json-value.js';

interface EventJson {
  description: string;
  aggregate: string;
  aggregateId: string;
  compatibility?: CompatibilityMode;
  policy?: CompatibilityPolicy;
  eventType?: string;
  kafka: KafkaEventTopic;
  ordering?: EventOrdering;
  rabbitmq: { exchange: string; routingKey: string };
}

/** Shared state of one load. */
interface LoadContext {
  readonly root: string;
  readonly problems: ProblemList;
  readonly checkers: SchemaCheckers;
  readonly files: SchemaFiles;
  readonly validateEventJson: ValidateFunction;
  readonly validateConsumerJson: ValidateFunction;
  /** Event types of every event folder, valid or not, so consumers of a broken event get no extra error. */
  readonly declaredEventTypes: Set<string>;
  readonly eventTypeFormat: string;
}

/** The released-versions lock `evgen check` keeps at the root of the events folder. */
export const RELEASE_LOCK_FILE = 'evgen.lock.json';
export interface LoadCatalogOptions {
  /** Template for event types not set in event.json (config `naming.eventType`), e.g. `{domain}.{event-name}`. */
  readonly eventTypeFormat?: string;
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
  const rootStat = await stat(root).catch(() => undefined);
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
  };

  const events: EventDefinition[] = [];
  let consumerFiles: string[] = [];
  for (const entry of await sortedEntries(root)) {
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

  checkCrossEventRules(events, context);
  const consumers = await loadConsumers(consumerFiles, events, context);
  problems.throwIfAny();
  return { root, events, consumers };
}

async function sortedEntries(dir: string): Promise<Dirent[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.sort((a, b) => compareStrings(a.name, b.name));
}

/** Hidden entries (`.git`, `.DS_Store`) are skipped silently; a name like `...` is not hidden. */
function isHidden(name: string): boolean {
  return /^\.[^.]/.test(name);
}

/**
 * Entries evgen cannot read as what they look like get a problem instead of being skipped
 * silently: symbolic links (evgen never follows them inside the events folder) and names made of
 * dots such as `...`. Returns true when the entry was reported.
 */
function refuseOddEntry(entry: Dirent, path: string, context: LoadContext): boolean {
  if (entry.isSymbolicLink()) {
    context.problems.add({
      code: 'symbolic-link',
      file: displayPath(path),
      pointer: '',
      message: 'is a symbolic link; evgen does not follow links inside the events folder',
      hint: 'replace the link with the folder or file itself (shared schemas belong in events/_common/)',
    });
    return true;
  }
  if (entry.name.startsWith('..')) {
    context.problems.add({
      code: 'invalid-name',
      file: displayPath(path),
      pointer: '',
      message: `${JSON.stringify(entry.name)} is not a domain, event or file name evgen can use`,
      hint: 'rename or remove it',
    });
    return true;
  }
  return false;
}

function unexpectedFile(path: string, hint: string, context: LoadContext): void {
  context.problems.add({
    code: 'unexpected-file',
    file: displayPath(path),
    pointer: '',
    message: 'evgen does not know what this file is',
    hint,
  });
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
  for (const entry of await sortedEntries(dir)) {
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

  const entries = await sortedEntries(dir);
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
    kafka: kafkaEventTopic(meta.kafka),
    ...(meta.ordering === undefined ? {} : { ordering: meta.ordering }),
    rabbitmq: { exchange: meta.rabbitmq.exchange, routingKey: meta.rabbitmq.routingKey },
    dir: `${domain}/${name}`,
    versions,
  };
}

/** The declared Kafka settings, without keys the file does not set. */
function kafkaEventTopic(kafka: KafkaEventTopic): KafkaEventTopic {
  return {
    topic: kafka.topic,
    ...(kafka.partitions === undefined ? {} : { partitions: kafka.partitions }),
    ...(kafka.retentionMs === undefined ? {} : { retentionMs: kafka.retentionMs }),
    ...(kafka.cleanupPolicy === undefined ? {} : { cleanupPolicy: kafka.cleanupPolicy }),
  };
}

function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The validated event.json, or (when it has problems) only its aggregateId when that one is
 * fine, so the payload schemas are still checked against it in the same run.
 */
async function readEventJson(
  path: string,
  context: LoadContext,
): Promise<{ meta?: EventJson; aggregateId?: string }> {
  const read = await readJsonFile(path, context.problems);
  if (!read.ok) return {};
  const file = displayPath(path);
  if (context.validateEventJson(read.value)) {
    const meta = read.value as unknown as EventJson;
    return { meta, aggregateId: meta.aggregateId };
  }
  const aggregateId = (read.value as { aggregateId?: unknown } | null)?.aggregateId;
  const errors = context.validateEventJson.errors ?? [];
  for (const error of errors) context.problems.add(eventJsonProblem(error, file, read.value));
  const aggregateIdOk =
    typeof aggregateId === 'string' &&
    !errors.some((error) => error.instancePath === '/aggregateId');
  return aggregateIdOk ? { aggregateId } : {};
}

/** One precise problem per ajv error of event.json, with a code people can search for. */
function eventJsonProblem(error: ErrorObject, file: string, document: unknown): CatalogProblem {
  const at = error.instancePath;
  const found = resolvePointer(document, at);
  // JSON.stringify escapes quotes and control characters, so the value prints on one line.
  const shown = found.found ? ` ${truncate(JSON.stringify(found.value) ?? '')}` : '';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const key = String(params.additionalProperty);
    const known =
      at === '' ? EVENT_JSON_KEYS : at === '/kafka' ? KAFKA_JSON_KEYS : ['exchange', 'routingKey'];
    return {
      code: 'unknown-key',
      file,
      pointer: `${at}/${pointerSegment(key)}`,
      message: `unknown key ${JSON.stringify(key)}`,
      hint: suggestion(key, known, `remove it; allowed keys: ${known.join(', ')}`),
    };
  }
  if (error.keyword === 'required') {
    const key = String(params.missingProperty);
    return {
      code: 'missing-key',
      file,
      pointer: at,
      message: `missing required key "${key}"`,
      hint: `add "${key}" (see the README, "Catalog format")`,
    };
  }
  if (error.keyword === 'enum' && at === '/compatibility') {
    return {
      code: 'unknown-compatibility-mode',
      file,
      pointer: at,
      message: `unknown compatibility mode${shown}`,
      hint: `use one of ${COMPATIBILITY_MODES.join(', ')} (default FULL_TRANSITIVE)`,
    };
  }
  if (error.keyword === 'enum' && at === '/policy') {
    return {
      code: 'unknown-policy',
      file,
      pointer: at,
      message: `unknown compatibility policy${shown}`,
      hint: `use one of ${COMPATIBILITY_POLICIES.join(', ')} (default evgen)`,
    };
  }
  if (error.keyword === 'enum' && at === '/ordering') {
    return {
      code: 'unknown-ordering',
      file,
      pointer: at,
      message: `unknown ordering${shown}`,
      hint: `use one of ${EVENT_ORDERINGS.join(', ')} (default relaxed: failed records go to retry topics)`,
    };
  }
  if (error.keyword === 'enum' && at === '/kafka/cleanupPolicy') {
    return {
      code: 'invalid-event-json',
      file,
      pointer: at,
      message: `unknown Kafka cleanup policy${shown}`,
      hint: `use one of ${KAFKA_CLEANUP_POLICIES.join(', ')} (default delete)`,
    };
  }
  const hints: Record<string, string> = {
    '/aggregate': 'a PascalCase name such as "Order"',
    '/aggregateId': 'the name of a required string property of the payload, e.g. "orderId"',
    '/eventType':
      'dot-separated identifiers, e.g. "order.OrderCreated" (the default is <domain>.<EventName>)',
    '/kafka/topic': 'letters, digits, ".", "_" and "-" only, at most 249 characters',
    '/kafka/partitions': `a whole number from 1 to ${MAX_KAFKA_PARTITIONS} (default ${DEFAULT_KAFKA_PARTITIONS})`,
    '/kafka/retentionMs': `milliseconds as a whole number, -1 for forever (default ${DEFAULT_KAFKA_RETENTION_MS}, 7 days)`,
    '/rabbitmq/exchange': 'letters, digits, ".", "_", ":" and "-" only',
    '/rabbitmq/routingKey': 'letters, digits, ".", "_", ":" and "-" only, e.g. "order.created"',
  };
  return {
    code: 'invalid-event-json',
    file,
    pointer: at,
    message:
      error.keyword === 'pattern'
        ? `${shown.trim()} contains characters that are not allowed here`
        : (error.message ?? `fails "${error.keyword}"`),
    hint: hints[at] ?? 'see the README, "Catalog format"',
  };
}

async function loadVersion(
  dir: string,
  version: number,
  aggregateId: string | undefined,
  context: LoadContext,
): Promise<EventVersion | undefined> {
  const path = join(dir, `v${version}.schema.json`);
  const file = await context.files.load(path);
  if (file === undefined) return undefined;
  const dialect = file.dialect ?? 'draft-07';
  if (!context.files.validate(file, dialect)) return undefined;
  const bundled = await bundleSchema(file, dialect, {
    catalogRoot: context.root,
    files: context.files,
    problems: context.problems,
  });
  if (bundled === undefined) return undefined;
  const compileError = context.checkers.compileError(bundled, dialect);
  if (compileError !== undefined) {
    context.problems.add({
      code: 'invalid-schema',
      file: file.display,
      pointer: '',
      message: `ajv cannot compile the schema: ${compileError}`,
      hint: 'fix the schema so a validator can be built from it',
    });
    return undefined;
  }
  if (aggregateId !== undefined) {
    const problem = checkAggregateId(bundled, aggregateId, file.display);
    if (problem !== undefined) {
      context.problems.add(problem);
      return undefined;
    }
  }
  return {
    version,
    file: `${dir
      .slice(context.root.length + 1)
      .split(/[\\/]/)
      .join('/')}/v${version}.schema.json`,
    schema: file.value as JsonSchema,
    bundled,
  };
}

/** Rules that look at several events at once: generated-name collisions, event types, routing keys. */
function checkCrossEventRules(events: readonly EventDefinition[], context: LoadContext): void {
  const eventJson = (event: EventDefinition) =>
    displayPath(join(context.root, event.dir, 'event.json'));
  const names = new Map<string, EventDefinition>();
  for (const event of events) {
    const clashes = new Map<EventDefinition, string[]>();
    for (const name of generatedNames(
      event,
      event.versions.map((version) => version.version),
    )) {
      const owner = names.get(name);
      if (owner === undefined) names.set(name, event);
      else clashes.set(owner, [...(clashes.get(owner) ?? []), name.replace(/^module:/, 'folder ')]);
    }
    for (const [owner, clashing] of clashes) {
      // Name one representative clash (the payload type when it is among them) so the message stays
      // stable when targets add more derived names.
      const preferred = [
        eventNames(event).payloadUnion,
        ...event.versions.map((v) => versionNames(event, v.version).payloadType),
      ];
      const example = preferred.find((name) => clashing.includes(name)) ?? clashing[0]!;
      context.problems.add({
        code: 'name-collision',
        file: eventJson(event),
        pointer: '',
        message: `generated names clash with ${eventJson(owner)} (both would generate ${example})`,
        hint: `rename one of the two events (evgen never renames silently), e.g. prefix it with its domain: "${pascalCase(event.domain)}${event.name}"`,
      });
    }
  }
  checkKafkaTopicSettings(events, context);
  const types = new Map<string, EventDefinition>();
  const routes = new Map<string, EventDefinition>();
  for (const event of events) {
    const sameType = types.get(event.eventType);
    if (sameType !== undefined) {
      context.problems.add({
        code: 'duplicate-event-type',
        file: eventJson(event),
        pointer: '',
        message: `event type "${event.eventType}" is also used by ${eventJson(sameType)}`,
        hint: 'give each event its own "eventType"',
      });
    } else types.set(event.eventType, event);
    const route = `${event.rabbitmq.exchange}\0${event.rabbitmq.routingKey}`;
    const sameRoute = routes.get(route);
    if (sameRoute !== undefined) {
      context.problems.add({
        code: 'duplicate-routing-key',
        file: eventJson(event),
        pointer: '/rabbitmq/routingKey',
        message: `routing key "${event.rabbitmq.routingKey}" on exchange "${event.rabbitmq.exchange}" is also used by ${eventJson(sameRoute)}`,
        hint: 'give each event its own routing key so consumers can bind to it alone',
      });
    } else routes.set(route, event);
  }
}

/**
 * Events sharing a Kafka topic must not declare different settings for it (one topic has one
 * partition count); settings one event leaves out are taken from the others.
 */
function checkKafkaTopicSettings(events: readonly EventDefinition[], context: LoadContext): void {
  const settings = ['partitions', 'retentionMs', 'cleanupPolicy'] as const;
  const eventJson = (event: EventDefinition) =>
    displayPath(join(context.root, event.dir, 'event.json'));
  const declared = new Map<string, EventDefinition>();
  for (const event of events) {
    for (const setting of settings) {
      const value = event.kafka[setting];
      if (value === undefined) continue;
      const key = `${event.kafka.topic}\0${setting}`;
      const first = declared.get(key);
      if (first === undefined) {
        declared.set(key, event);
      } else if (first.kafka[setting] !== value) {
        context.problems.add({
          code: 'conflicting-kafka-topic',
          file: eventJson(event),
          pointer: `/kafka/${setting}`,
          message: `topic "${event.kafka.topic}" is declared with ${setting} ${JSON.stringify(value)} here and ${JSON.stringify(first.kafka[setting])} in ${eventJson(first)}`,
          hint: `declare ${setting} once for the topic, or give both events the same value`,
        });
      }
    }
  }
}

async function listConsumerFiles(dir: string, context: LoadContext): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await sortedEntries(dir)) {
    const path = join(dir, entry.name);
    if (isHidden(entry.name) || refuseOddEntry(entry, path, context)) continue;
    if (entry.isFile() && entry.name.endsWith('.json')) files.push(path);
    else unexpectedFile(path, 'consumers are declared as events/_consumers/<name>.json', context);
  }
  return files;
}

async function loadConsumers(
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
