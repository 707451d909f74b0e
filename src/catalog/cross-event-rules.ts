/**
 * Rules that look at several events at once. Each event alone can be valid while two of them
 * together are not: clashing generated names, one event type or routing key used twice, or one
 * Kafka or Pulsar topic declared with different settings.
 */
import { join } from 'node:path';
import { eventNames, pascalCase, versionNames } from '../common/naming.js';
import type { LoadContext } from './load-context.js';
import { kafkaEvents, pulsarEvents, pulsarTopicName } from './event-transports.js';
import type { EventDefinition } from './model.js';
import { generatedNames } from './name-rules.js';
import { displayPath } from './read-json-file.js';

/** An event's event.json as messages name it: under its own catalog's folder. */
function eventJsonFile(event: EventDefinition, context: LoadContext): string {
  return displayPath(join(event.dependency?.root ?? context.root, event.dir, 'event.json'));
}

/** Rules that look at several events at once: generated-name collisions, event types, routing keys. */
export function checkCrossEventRules(
  events: readonly EventDefinition[],
  context: LoadContext,
): void {
  const eventJson = (event: EventDefinition) => eventJsonFile(event, context);
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
  checkPulsarTopicSettings(events, context);
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
    if (event.rabbitmq === undefined) continue;
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
  const eventJson = (event: EventDefinition) => eventJsonFile(event, context);
  const declared = new Map<string, (typeof kafkaOnes)[number]>();
  const kafkaOnes = kafkaEvents(events);
  for (const event of kafkaOnes) {
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

/**
 * Events sharing a Pulsar topic (the same tenant, namespace and topic) must not declare different
 * partition counts: the topic is partitioned once, with one count.
 */
function checkPulsarTopicSettings(events: readonly EventDefinition[], context: LoadContext): void {
  const declared = new Map<string, (typeof pulsarOnes)[number]>();
  const pulsarOnes = pulsarEvents(events);
  for (const event of pulsarOnes) {
    const partitions = event.pulsar.partitions;
    if (partitions === undefined) continue;
    const topic = pulsarTopicName(event.pulsar);
    const first = declared.get(topic);
    if (first === undefined) {
      declared.set(topic, event);
    } else if (first.pulsar.partitions !== partitions) {
      context.problems.add({
        code: 'conflicting-pulsar-topic',
        file: eventJsonFile(event, context),
        pointer: '/pulsar/partitions',
        message: `topic "${topic}" is declared with partitions ${partitions} here and ${String(first.pulsar.partitions)} in ${eventJsonFile(first, context)}`,
        hint: 'declare partitions once for the topic, or give both events the same value',
      });
    }
  }
}
