/**
 * What evgen registers for one version of one event: the JSON schema of the whole Kafka record
 * value (the envelope, with the version's bundled payload schema at `/properties/payload`), plus
 * an `x-evgen` annotation carrying what a consumer repository needs beyond the schema to rebuild
 * the event folder: the event type, the version, the folder, the event.json as written (aggregate,
 * aggregateId property, topic, transports, mode) and the payload root's `$schema` / `$id`.
 *
 * - The envelope, not the bare payload, is registered because the record value IS the envelope:
 *   a Confluent or kafkajs deserializer validates the value against the registered schema.
 * - `schemaVersion` is an integer, not a constant: with a constant every new version would be
 *   incompatible with the one before in the registry's eyes.
 * - `title` is the event type: Confluent's RecordNameStrategy reads the record name from it.
 * - The text is one deterministic serialization (no whitespace, keys in source order): the
 *   registry gives a whitespace variant a new id, so every push sends the same bytes.
 *
 * `readRegisteredSchema` is the exact inverse for `registry pull`.
 */
import type { EventDefinition, EventVersion, JsonSchema } from '../catalog/model.js';
import { canonicalJson } from '../common/canonical-json.js';
import { relocateSchema, unrelocateSchema } from '../schema/relocate-schema.js';

export const ANNOTATION = 'x-evgen';
const PAYLOAD_BASE = '/properties/payload';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** The `x-evgen` annotation of a registered schema. */
export interface EvgenAnnotation {
  readonly eventType: string;
  readonly version: number;
  /** The event's folder under the events folder (`order/OrderCreated`). */
  readonly folder: string;
  /** event.json exactly as parsed (at the time this version was pushed). */
  readonly event: Readonly<Record<string, unknown>>;
  /** `$schema` / `$id` of the payload schema's root, which the envelope cannot keep in place. */
  readonly payloadRoot: Readonly<Record<string, string>>;
}

export interface RegisteredSchema {
  /** The text sent to the registry. */
  readonly text: string;
  readonly annotation: EvgenAnnotation;
}

function rootKeywords(schema: JsonSchema): Record<string, string> {
  const kept: Record<string, string> = {};
  if (typeof schema !== 'object') return kept;
  for (const keyword of ['$schema', '$id'])
    if (typeof schema[keyword] === 'string') kept[keyword] = schema[keyword];
  return kept;
}

/** The schema `push` registers for `version` of `event`; `eventJson` is its event.json as parsed. */
export function registeredSchema(
  event: EventDefinition,
  version: EventVersion,
  eventJson: Readonly<Record<string, unknown>>,
): RegisteredSchema {
  const payloadRoot = rootKeywords(version.bundled);
  const annotation: EvgenAnnotation = {
    eventType: event.eventType,
    version: version.version,
    folder: event.dir,
    event: eventJson,
    payloadRoot,
  };
  const text = { type: 'string' };
  const envelope = {
    // The payload's dialect governs the whole document; draft-07 when it declares none.
    $schema: payloadRoot.$schema ?? DRAFT_07,
    title: event.eventType,
    type: 'object',
    required: [
      'messageId',
      'eventType',
      'schemaVersion',
      'aggregateType',
      'aggregateId',
      'occurredAt',
      'payload',
    ],
    properties: {
      messageId: text,
      eventType: { const: event.eventType },
      schemaVersion: { type: 'integer', minimum: 1 },
      aggregateType: text,
      aggregateId: text,
      aggregateVersion: { type: 'integer', minimum: 1 },
      occurredAt: text,
      traceId: text,
      correlationId: text,
      causationId: text,
      payload: relocateSchema(version.bundled, PAYLOAD_BASE),
    },
    [ANNOTATION]: annotation,
  };
  return { text: JSON.stringify(envelope), annotation };
}

/** A registered schema read back: evgen's annotation and the payload schema as bundled. */
export interface ReadSchema {
  readonly annotation: EvgenAnnotation;
  readonly payload: JsonSchema;
}

/**
 * Reads a registered schema evgen wrote; a string saying what is missing when it is not one
 * (a subject another tool registered).
 */
export function readRegisteredSchema(text: string): ReadSchema | string {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return 'the schema is not JSON';
  }
  if (typeof schema !== 'object' || schema === null) return 'the schema is not an object';
  const root = schema as Record<string, unknown>;
  const annotation = root[ANNOTATION] as Partial<EvgenAnnotation> | undefined;
  if (
    typeof annotation !== 'object' ||
    annotation === null ||
    typeof annotation.eventType !== 'string' ||
    !Number.isInteger(annotation.version) ||
    typeof annotation.folder !== 'string' ||
    typeof annotation.event !== 'object' ||
    annotation.event === null ||
    typeof annotation.payloadRoot !== 'object' ||
    annotation.payloadRoot === null
  )
    return `it has no "${ANNOTATION}" annotation (not registered by evgen registry push)`;
  const properties = root.properties as Record<string, unknown> | undefined;
  const placed = properties?.payload;
  if (placed === undefined) return 'it has no /properties/payload';
  const payload = unrelocateSchema(placed, PAYLOAD_BASE) as JsonSchema;
  const restored =
    typeof payload === 'object' && Object.keys(annotation.payloadRoot).length > 0
      ? { ...annotation.payloadRoot, ...payload }
      : payload;
  return { annotation: annotation as EvgenAnnotation, payload: restored };
}

/** Whether two registered texts carry the same payload schema (formatting and annotation aside). */
export function samePayload(registered: string, wanted: JsonSchema): boolean {
  const read = readRegisteredSchema(registered);
  return typeof read !== 'string' && canonicalJson(read.payload) === canonicalJson(wanted);
}
