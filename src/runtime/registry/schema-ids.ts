/**
 * Schema ids for Confluent's wire format, resolved once and cached: producers ask for the id of
 * the exact version an envelope carries, consumers ask what an id they read is.
 *
 * - Producer side (`idFor`): the id of `<subject>` version N, where the subject follows the
 *   strategy `evgen registry push` used and version N is the event's vN (push registers them in
 *   order). The registered schema's `x-evgen` annotation must name the same event and version.
 *   One registry call per event version for the life of the process; concurrent callers share it.
 *   A failure (registry down, version not pushed yet) is not cached: the next record asks again.
 *   The error is a SchemaRegistryError marked as an outage, so the outbox relay keeps the row
 *   (attempts untouched) and retries with its outage backoff; nothing is lost, nothing is sent
 *   unframed instead.
 * - Consumer side (`lookup`): what event and version an id is. One registry call per id; an id
 *   the registry does not know, or a schema evgen did not register, is remembered as unknown.
 *   A registry that cannot be reached is not remembered (the next record with that id asks again).
 */
import { SchemaRegistryError } from './schema-registry-error.js';
import {
  createSchemaRegistryClient,
  type SchemaRegistryClient,
  type SchemaRegistryOptions,
} from './schema-registry-client.js';
import {
  DEFAULT_SUBJECT_NAME_STRATEGY,
  subjectName,
  type SubjectNameStrategy,
} from './subject-name.js';

/** An event version as the registry annotation of evgen names it. */
export interface RegisteredEventVersion {
  readonly eventType: string;
  readonly version: number;
}

export interface SchemaIdsOptions {
  /** The registry (a client, or the options to create one). */
  readonly registry: SchemaRegistryClient | SchemaRegistryOptions;
  /**
   * The strategy `evgen registry push` used (default RecordNameStrategy), or a function naming
   * the subject of an event (as Confluent serializers accept a custom strategy).
   */
  readonly subjectNameStrategy?:
    | SubjectNameStrategy
    | ((event: { readonly eventType: string; readonly topic?: string }) => string);
}

export interface SchemaIds {
  /** The id of `eventType` v`version` (its catalog `topic` for the topic strategies). */
  idFor(eventType: string, version: number, topic?: string): Promise<number>;
  /** The id when it is already resolved (no promise, no registry call). */
  cachedId(eventType: string, version: number): number | undefined;
  /** What `id` is; undefined when the registry does not know it or evgen did not register it. */
  lookup(id: number): Promise<RegisteredEventVersion | undefined>;
}

/** The `x-evgen` annotation's event and version, if the schema text carries one. */
function annotatedVersion(schema: string): RegisteredEventVersion | undefined {
  try {
    const annotation = (JSON.parse(schema) as { 'x-evgen'?: Partial<RegisteredEventVersion> })[
      'x-evgen'
    ];
    return typeof annotation?.eventType === 'string' && Number.isInteger(annotation.version)
      ? { eventType: annotation.eventType, version: annotation.version! }
      : undefined;
  } catch {
    return undefined;
  }
}

export function createSchemaIds(options: SchemaIdsOptions): SchemaIds {
  const client =
    'register' in options.registry
      ? options.registry
      : createSchemaRegistryClient(options.registry);
  const strategy = options.subjectNameStrategy ?? DEFAULT_SUBJECT_NAME_STRATEGY;
  const ids = new Map<string, number>();
  const resolving = new Map<string, Promise<number>>();
  const known = new Map<number, RegisteredEventVersion | undefined>();
  const looking = new Map<number, Promise<RegisteredEventVersion | undefined>>();

  async function resolve(eventType: string, version: number, topic?: string): Promise<number> {
    const subject =
      typeof strategy === 'function'
        ? strategy({ eventType, ...(topic !== undefined ? { topic } : {}) })
        : subjectName(strategy, { eventType, topic });
    if (subject === undefined)
      throw new SchemaRegistryError(
        'not-found',
        `${eventType} has no Kafka topic, and ${String(strategy)} names subjects by topic`,
      );
    const found = await client.version(subject, version);
    const annotated = found === undefined ? undefined : annotatedVersion(found.schema);
    if (
      found === undefined ||
      annotated?.eventType !== eventType ||
      annotated.version !== version
    ) {
      throw new SchemaRegistryError(
        'not-found',
        found === undefined
          ? `${eventType} v${version} is not registered as version ${version} of subject ${subject} at ${client.url}: run evgen registry push before producing it`
          : `subject ${subject} version ${version} at ${client.url} is not ${eventType} v${version} (another subject name strategy?)`,
        404,
        undefined,
        { outage: true },
      );
    }
    return found.id;
  }

  return {
    idFor(eventType, version, topic) {
      const key = `${eventType}\0${version}`;
      const id = ids.get(key);
      if (id !== undefined) return Promise.resolve(id);
      let pending = resolving.get(key);
      if (pending === undefined) {
        pending = resolve(eventType, version, topic).then(
          (resolved) => {
            ids.set(key, resolved);
            resolving.delete(key);
            return resolved;
          },
          (error: unknown) => {
            resolving.delete(key);
            throw error;
          },
        );
        resolving.set(key, pending);
      }
      return pending;
    },
    cachedId(eventType, version) {
      return ids.get(`${eventType}\0${version}`);
    },
    lookup(id) {
      if (known.has(id)) return Promise.resolve(known.get(id));
      let pending = looking.get(id);
      if (pending === undefined) {
        pending = client.schemaById(id).then(
          (schema) => {
            const version = schema === undefined ? undefined : annotatedVersion(schema);
            known.set(id, version);
            looking.delete(id);
            return version;
          },
          (error: unknown) => {
            looking.delete(id);
            throw error;
          },
        );
        looking.set(id, pending);
      }
      return pending;
    },
  };
}
