/**
 * Target `kafka`: the Kafka side of the catalog.
 *   kafka/topics.ts     `kafkaTopology` (event topics with partitions / retention / cleanup
 *                       policy, consumers with subscriptions, retry tier and dead-letter topics)
 *                       and `ensureKafkaTopics(admin, options?)`;
 *   kafka/producers.ts  `kafkaRoutes` (event type → topic, and `wireFormat: 'confluent'` for the
 *                       events whose records are framed) for the outbox relay, and
 *                       `publishOrderCreatedV2(producer, envelope)` per event version, for the
 *                       events the repository produces (none of a dependency catalog's).
 * Envelope types come from each event's `envelope.ts` (envelopes target).
 */
import { isProduced } from '../../catalog/produced-events.js';
import {
  DEFAULT_KAFKA_PARTITIONS,
  DEFAULT_KAFKA_RETENTION_MS,
  type Catalog,
  type EventDefinition,
  type KafkaCleanupPolicy,
} from '../../catalog/model.js';
import { kafkaEvents } from '../../catalog/event-transports.js';
import {
  DEFAULT_KAFKA_RETRY_TIERS_MS,
  kafkaConsumerTopics,
} from '../../runtime/kafka/topic-names.js';
import { eventModuleDir, pascalCase, versionNames } from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { Target, TargetContext, TargetFile } from '../target.js';
import { compareStrings } from '../../common/json-value.js';
import { subscribedEvents } from './consumers.js';
import { eventJson, relativeImport } from './event-files.js';

export const KAFKA_TOPICS_PATH = 'kafka/topics.ts';
export const KAFKA_PRODUCERS_PATH = 'kafka/producers.ts';

/** Retry copies live as long as event topics; dead letters four weeks, to be looked at. */
const RETRY_RETENTION_MS = DEFAULT_KAFKA_RETENTION_MS;
export const DEAD_LETTER_RETENTION_MS = 2_419_200_000;

/** `publishOrderCreatedV2`: the generated producer helper of one event version. */
export function kafkaPublishFunctionName(
  event: Pick<EventDefinition, 'name'>,
  version: number,
): string {
  return `publish${pascalCase(event.name)}V${version}`;
}

export interface TopicSettings {
  topic: string;
  partitions: number;
  retentionMs: number;
  cleanupPolicy: KafkaCleanupPolicy;
}

/** One entry per topic: what its events declare (the loader refused conflicts), else defaults. */
export function topicSettings(catalog: Catalog): Map<string, TopicSettings> {
  const topics = new Map<string, TopicSettings>();
  const events = kafkaEvents(catalog.events).sort((a, b) =>
    compareStrings(a.eventType, b.eventType),
  );
  for (const event of events) {
    const { topic } = event.kafka;
    if (!topics.has(topic)) {
      topics.set(topic, {
        topic,
        partitions: DEFAULT_KAFKA_PARTITIONS,
        retentionMs: DEFAULT_KAFKA_RETENTION_MS,
        cleanupPolicy: 'delete',
      });
    }
  }
  const declared = new Set<string>();
  for (const event of events) {
    const settings = topics.get(event.kafka.topic)!;
    for (const key of ['partitions', 'retentionMs', 'cleanupPolicy'] as const) {
      const value = event.kafka[key];
      if (value === undefined || declared.has(`${settings.topic}\0${key}`)) continue;
      declared.add(`${settings.topic}\0${key}`);
      (settings as Record<typeof key, unknown>)[key] = value;
    }
  }
  return topics;
}

function renderTopics(catalog: Catalog, runtimeImport: string): TargetFile {
  const settings = topicSettings(catalog);
  const sources = kafkaEvents(catalog.events).map(eventJson);
  // A consumer's Kafka subscriptions are those of its events that are on Kafka; a consumer of
  // RabbitMQ-only events has no Kafka topics at all.
  const consumers = [...catalog.consumers]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((consumer) => ({ consumer, events: kafkaEvents(subscribedEvents(catalog, consumer)) }))
    .filter(({ events }) => events.length > 0)
    .map(({ consumer, events }) => {
      sources.push(consumer.file);
      const subscriptions = events
        .map((event) => ({
          eventType: event.eventType,
          topic: event.kafka.topic,
          ordering: event.ordering ?? 'relaxed',
        }))
        .sort((a, b) => compareStrings(a.eventType, b.eventType));
      const names = kafkaConsumerTopics(consumer.name, DEFAULT_KAFKA_RETRY_TIERS_MS);
      return {
        name: consumer.name,
        subscriptions,
        retryTopics: names.retry,
        deadLetterTopic: names.deadLetter,
        partitions: Math.max(...subscriptions.map((s) => settings.get(s.topic)!.partitions)),
        retryRetentionMs: RETRY_RETENTION_MS,
        deadLetterRetentionMs: DEAD_LETTER_RETENTION_MS,
      };
    });
  const body = renderTemplate('kafka-topics', {
    runtimeImport,
    topics: [...settings.values()].sort((a, b) => compareStrings(a.topic, b.topic)),
    consumers,
  });
  return { path: KAFKA_TOPICS_PATH, body, sources };
}

function renderProducers(catalog: Catalog, runtimeImport: string): TargetFile | undefined {
  // Routes and publish helpers for what this repository produces, not for its dependencies.
  const events = kafkaEvents(catalog.events.filter(isProduced)).sort((a, b) =>
    compareStrings(a.eventType, b.eventType),
  );
  if (events.length === 0) return undefined;
  const imports = events.map((event) => ({
    path: relativeImport(KAFKA_PRODUCERS_PATH, `${eventModuleDir(event)}/envelope.js`),
    types: event.versions.map((v) => versionNames(event, v.version).envelopeType),
  }));
  const versions = events.flatMap((event) =>
    event.versions.map((v) => ({
      eventType: event.eventType,
      version: v.version,
      topic: event.kafka.topic,
      framed: event.kafka.wireFormat === 'confluent',
      envelopeType: versionNames(event, v.version).envelopeType,
      functionName: kafkaPublishFunctionName(event, v.version),
    })),
  );
  const body = renderTemplate('kafka-producers', {
    runtimeImport,
    imports,
    // The catalog's wire format choice travels in the routes: framed events are marked.
    events: events.map((event) => ({
      eventType: event.eventType,
      topic: event.kafka.topic,
      framed: event.kafka.wireFormat === 'confluent',
    })),
    versions,
  });
  return { path: KAFKA_PRODUCERS_PATH, body, sources: events.map(eventJson) };
}

export const kafkaTarget: Target = {
  name: 'kafka',
  requires: ['envelopes'],
  readsSchemas: false,
  generate(context: TargetContext): readonly TargetFile[] {
    // Nothing to write when no event is published on Kafka (an empty or RabbitMQ-only catalog).
    if (kafkaEvents(context.catalog.events).length === 0) return [];
    const producers = renderProducers(context.catalog, context.runtimeImport);
    return [
      ...(producers === undefined ? [] : [producers]),
      renderTopics(context.catalog, context.runtimeImport),
    ];
  },
};
