/**
 * An AsyncAPI 3.0 document of the catalog, so AsyncAPI tooling (docs, studio, codegen) can read
 * what evgen publishes: one channel per Kafka topic, per RabbitMQ exchange + routing key and per
 * Pulsar topic, one message per event version (the JSON envelope, its payload schema inlined, and
 * the broker headers), a send operation per channel and a receive operation per declared consumer and
 * subscribed event. Pure: catalog in, document out; the CLI writes it.
 */
import {
  kafkaEvents,
  pulsarEvents,
  pulsarTopicName,
  rabbitEvents,
} from '../catalog/event-transports.js';
import {
  DEFAULT_PULSAR_NAMESPACE,
  type Catalog,
  type ConsumerDefinition,
  type EventDefinition,
  type JsonSchema,
  type PulsarEventTopic,
  type RabbitEventRoute,
} from '../catalog/model.js';
import { pointerSegment } from '../common/json-pointer.js';
import { relocateSchema } from '../schema/relocate-schema.js';
import { mapSchema } from '../schema/walk.js';
import { compareStrings } from '../common/json-value.js';
import { printableJson } from '../diagnostics/printable.js';

export const ASYNCAPI_VERSION = '3.0.0';

export interface AsyncApiOptions {
  /** `info.title`; default "evgen event catalog". */
  readonly title?: string;
  /** `info.version` (the catalog's version, not evgen's); default "1.0.0". */
  readonly version?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Component and channel keys must match `^[a-zA-Z0-9.\-_]+$`. */
function componentKey(text: string): string {
  return text.replace(/[^a-zA-Z0-9.\-_]/g, '_');
}

/** The JSON Schema dialect a version's schema declares: 2020-12 or draft-07 (the default). */
function schemaFormat(schema: JsonSchema): string {
  const declared = typeof schema === 'object' ? schema.$schema : undefined;
  return typeof declared === 'string' && declared.includes('2020-12')
    ? 'application/schema+json;version=2020-12'
    : 'application/schema+json;version=draft-07';
}

/**
 * The bundled payload schema, placed at `base` inside the AsyncAPI document (see
 * relocate-schema.ts); `$schema` moves to the message's schemaFormat.
 */
function relocatedSchema(schema: JsonSchema, base: string): Json {
  return mapSchema(relocateSchema(schema, base), withoutLiveRefs, { copyData: true }) as Json;
}

/** Keywords whose values are data, never schemas: a `$ref` in them is text, not a reference. */
const isDataKeyword = (key: string) =>
  ['default', 'const', 'enum', 'examples', 'example'].includes(key) || key.startsWith('x-');

function holdsRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsRef);
  if (typeof value !== 'object' || value === null) return false;
  return Object.hasOwn(value, '$ref') || Object.values(value).some(holdsRef);
}

/**
 * The node without data keywords that hold a `$ref` member: AsyncAPI tools resolve every `$ref`
 * in the document, data included, so copying one would make them fetch URLs or open local files
 * the catalog merely mentions. The payload's validators keep the data; the document loses it.
 */
function withoutLiveRefs(node: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...node };
  for (const key of Object.keys(copy))
    if (isDataKeyword(key) && holdsRef(copy[key])) delete copy[key];
  return copy;
}

/** The envelope around a version's payload: the body of every message evgen publishes. */
function envelopeSchema(event: EventDefinition, version: number, payload: Json): JsonObject {
  const text = { type: 'string' };
  return {
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
      messageId: {
        type: 'string',
        format: 'uuid',
        description: 'Unique per event; unchanged across retries, replays and dead letters.',
      },
      eventType: { type: 'string', const: event.eventType },
      schemaVersion: { type: 'integer', const: version },
      aggregateType: { type: 'string', const: event.aggregate },
      aggregateId: {
        type: 'string',
        description: `The payload's ${event.aggregateId}: the Kafka record key and the unit of ordering.`,
      },
      aggregateVersion: { type: 'integer', minimum: 1 },
      occurredAt: { type: 'string', format: 'date-time' },
      traceId: text,
      correlationId: text,
      causationId: text,
      payload,
    },
  };
}

/** Broker headers of an evgen RabbitMQ message (the AMQP messageId property carries the envelope's). */
function amqpHeadersSchema(): JsonObject {
  const text = { type: 'string' };
  return {
    type: 'object',
    properties: {
      'x-evgen-aggregate-id': text,
      'x-evgen-aggregate-type': text,
      'x-evgen-aggregate-version': { type: 'integer' },
      'x-evgen-causation-id': text,
      'x-evgen-correlation-id': text,
      'x-evgen-occurred-at': { type: 'string', format: 'date-time' },
      'x-evgen-schema-version': { type: 'integer' },
      'x-evgen-trace-id': text,
    },
  };
}

interface MessageEntry {
  readonly key: string;
  readonly event: EventDefinition;
  readonly version: number;
}

function messageKey(event: EventDefinition, version: number): string {
  return componentKey(`${event.domain}.${event.name}.v${version}`);
}

function kafkaChannelKey(topic: string): string {
  return componentKey(`kafka.${topic}`);
}

function rabbitChannelKey(route: RabbitEventRoute): string {
  return componentKey(`rabbitmq.${route.exchange}.${route.routingKey}`);
}

function pulsarChannelKey(topic: PulsarEventTopic): string {
  return componentKey(
    `pulsar.${pulsarTopicName(topic).slice('persistent://'.length)}`.replace(/\//g, '.'),
  );
}

function messageComponent(entry: MessageEntry): JsonObject {
  const { event, version } = entry;
  const schema = event.versions.find((v) => v.version === version)!.bundled;
  const payloadBase = `/components/messages/${pointerSegment(entry.key)}/payload/schema/properties/payload`;
  return {
    name: event.eventType,
    title: `${event.name} v${version}`,
    summary: event.description,
    contentType: 'application/json',
    headers: amqpHeadersSchema(),
    payload: {
      schemaFormat: schemaFormat(schema),
      schema: envelopeSchema(event, version, relocatedSchema(schema, payloadBase)),
    },
    correlationId: { location: '$message.payload#/messageId' },
    bindings: {
      kafka: {
        key: { type: 'string', description: `aggregateId (the payload's ${event.aggregateId})` },
        bindingVersion: '0.5.0',
      },
      amqp: { contentEncoding: 'utf-8', messageType: event.eventType, bindingVersion: '0.3.0' },
    },
  };
}

function messageRefs(channelKey: string, entries: readonly MessageEntry[]): Json[] {
  return entries.map((entry) => ({
    $ref: `#/channels/${pointerSegment(channelKey)}/messages/${pointerSegment(entry.key)}`,
  }));
}

function channelMessages(entries: readonly MessageEntry[]): JsonObject {
  return Object.fromEntries(
    entries.map((entry) => [entry.key, { $ref: `#/components/messages/${entry.key}` }]),
  );
}

/** The AsyncAPI document (as a plain JSON value, keys in a fixed order). */
export function buildAsyncApiDocument(catalog: Catalog, options: AsyncApiOptions = {}): JsonObject {
  const events = [...catalog.events].sort((a, b) => compareStrings(a.eventType, b.eventType));
  const versionsOf = (event: EventDefinition): MessageEntry[] =>
    event.versions.map((v) => ({ key: messageKey(event, v.version), event, version: v.version }));

  const messages: JsonObject = {};
  for (const event of events)
    for (const entry of versionsOf(event)) messages[entry.key] = messageComponent(entry);

  // Kafka: one channel per topic, carrying every version of every event on it.
  const topics = new Map<string, MessageEntry[]>();
  for (const event of kafkaEvents(events)) {
    const list = topics.get(event.kafka.topic) ?? [];
    list.push(...versionsOf(event));
    topics.set(event.kafka.topic, list);
  }
  const channels: JsonObject = {};
  const operations: JsonObject = {};
  for (const topic of [...topics.keys()].sort(compareStrings)) {
    const key = kafkaChannelKey(topic);
    const entries = topics.get(topic)!;
    channels[key] = {
      address: topic,
      title: `Kafka topic ${topic}`,
      messages: channelMessages(entries),
      bindings: { kafka: { topic, bindingVersion: '0.5.0' } },
    };
    operations[`publish.${key}`] = {
      action: 'send',
      summary: `The outbox relay and the generated Kafka producers publish to ${topic} (key = aggregateId).`,
      channel: { $ref: `#/channels/${pointerSegment(key)}` },
      messages: messageRefs(key, entries),
    };
  }
  // RabbitMQ: one channel per event (exchange + routing key).
  for (const event of rabbitEvents(events)) {
    const key = rabbitChannelKey(event.rabbitmq);
    const entries = versionsOf(event);
    channels[key] = {
      address: event.rabbitmq.routingKey,
      title: `RabbitMQ exchange ${event.rabbitmq.exchange}, routing key ${event.rabbitmq.routingKey}`,
      messages: channelMessages(entries),
      bindings: {
        amqp: {
          is: 'routingKey',
          exchange: {
            name: event.rabbitmq.exchange,
            type: 'topic',
            durable: true,
            autoDelete: false,
            vhost: '/',
          },
          bindingVersion: '0.3.0',
        },
      },
    };
    operations[`publish.${key}`] = {
      action: 'send',
      summary: `The outbox relay and the generated RabbitMQ publishers send ${event.eventType} here (persistent, confirmed).`,
      channel: { $ref: `#/channels/${pointerSegment(key)}` },
      messages: messageRefs(key, entries),
    };
  }
  // Pulsar: one channel per topic (tenant, namespace, topic), like Kafka. The binding has no
  // tenant field (it is a server binding's, and the document names no servers): the address, the
  // full topic name, carries it.
  const pulsarTopics = new Map<string, { topic: PulsarEventTopic; entries: MessageEntry[] }>();
  for (const event of pulsarEvents(events)) {
    const key = pulsarChannelKey(event.pulsar);
    const known = pulsarTopics.get(key) ?? { topic: event.pulsar, entries: [] };
    known.entries.push(...versionsOf(event));
    pulsarTopics.set(key, known);
  }
  for (const key of [...pulsarTopics.keys()].sort(compareStrings)) {
    const { topic, entries } = pulsarTopics.get(key)!;
    const address = pulsarTopicName(topic);
    channels[key] = {
      address,
      title: `Pulsar topic ${address}`,
      messages: channelMessages(entries),
      bindings: {
        pulsar: {
          namespace: topic.namespace ?? DEFAULT_PULSAR_NAMESPACE,
          persistence: 'persistent',
          bindingVersion: '0.1.0',
        },
      },
    };
    operations[`publish.${key}`] = {
      action: 'send',
      summary: `The outbox relay and the generated Pulsar publishers send to ${address} (key = aggregateId, the envelope's ids as message properties).`,
      channel: { $ref: `#/channels/${pointerSegment(key)}` },
      messages: messageRefs(key, entries),
    };
  }
  // Consumers: one receive operation per subscribed event and transport.
  const byType = new Map(events.map((event) => [event.eventType, event]));
  const consumers: ConsumerDefinition[] = [...catalog.consumers].sort((a, b) =>
    compareStrings(a.name, b.name),
  );
  for (const consumer of consumers) {
    for (const eventType of [...consumer.subscribes].sort(compareStrings)) {
      const event = byType.get(eventType);
      if (event === undefined) continue;
      const entries = versionsOf(event);
      const transports: [string, string][] = [
        ...(event.kafka ? [['kafka', kafkaChannelKey(event.kafka.topic)] as [string, string]] : []),
        ...(event.rabbitmq
          ? [['rabbitmq', rabbitChannelKey(event.rabbitmq)] as [string, string]]
          : []),
        ...(event.pulsar ? [['pulsar', pulsarChannelKey(event.pulsar)] as [string, string]] : []),
      ];
      for (const [transport, key] of transports) {
        operations[componentKey(`${consumer.name}.receive.${eventType}.${transport}`)] = {
          action: 'receive',
          summary: consumer.description,
          description: `${consumer.name} handles ${eventType} through its inbox: once per messageId, any version.`,
          channel: { $ref: `#/channels/${pointerSegment(key)}` },
          messages: messageRefs(key, entries),
        };
      }
    }
  }
  return {
    asyncapi: ASYNCAPI_VERSION,
    info: {
      title: options.title ?? 'evgen event catalog',
      version: options.version ?? '1.0.0',
      description:
        'Generated by evgen from the event catalog. Every message is a JSON envelope; the same messageId travels through retries, replays and dead letters.',
    },
    defaultContentType: 'application/json',
    channels: sortKeys(channels),
    operations: sortKeys(operations),
    components: { messages: sortKeys(messages) },
  };
}

function sortKeys(object: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.keys(object)
      .sort(compareStrings)
      .map((key) => [key, object[key]!]),
  );
}

/** The document as JSON text: two-space indent, LF, one trailing newline. */
export function renderAsyncApiDocument(catalog: Catalog, options: AsyncApiOptions = {}): string {
  return `${printableJson(buildAsyncApiDocument(catalog, options))}\n`;
}
