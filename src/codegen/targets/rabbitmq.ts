/**
 * Target `rabbitmq`: the broker side of the catalog.
 *   rabbitmq/topology.ts    `rabbitTopology` (domain exchanges, consumers and their subscriptions)
 *                           for the runtime's `assertTopology`;
 *   rabbitmq/publishers.ts  `rabbitRoutes` (event type → exchange + routing key) for the outbox
 *                           relay, and `publishOrderCreated(publisher, envelope)` per event, so no
 *                           call site spells an exchange or routing key.
 * Envelope types come from each event's `envelope.ts` (envelopes target).
 */
import { rabbitEvents } from '../../catalog/event-transports.js';
import type { Catalog, EventDefinition } from '../../catalog/model.js';
import { isProduced } from '../../catalog/produced-events.js';
import { eventModuleDir, eventNames, pascalCase } from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { TargetFile, Target, TargetContext } from '../target.js';
import { compareStrings } from '../../common/json-value.js';
import { subscribedEvents } from './consumers.js';
import { eventJson, relativeImport } from './event-files.js';

export const RABBITMQ_TOPOLOGY_PATH = 'rabbitmq/topology.ts';
export const RABBITMQ_PUBLISHERS_PATH = 'rabbitmq/publishers.ts';

/** `publishOrderCreated`: the generated producer helper of an event. */
export function rabbitPublishFunctionName(event: Pick<EventDefinition, 'name'>): string {
  return `publish${pascalCase(event.name)}`;
}

function renderTopology(catalog: Catalog, runtimeImport: string): TargetFile {
  const events = rabbitEvents(catalog.events);
  const sources = events.map(eventJson);
  // A consumer's bindings are those of its events that are on RabbitMQ; a consumer of
  // Kafka-only events gets no queue at all.
  const consumers = [...catalog.consumers]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((consumer) => ({ consumer, events: rabbitEvents(subscribedEvents(catalog, consumer)) }))
    .filter(({ events: subscribed }) => subscribed.length > 0)
    .map(({ consumer, events: subscribed }) => {
      sources.push(consumer.file);
      const subscriptions = subscribed
        .map((event) => ({
          eventType: event.eventType,
          exchange: event.rabbitmq.exchange,
          routingKey: event.rabbitmq.routingKey,
        }))
        .sort((a, b) => compareStrings(a.eventType, b.eventType));
      return { name: consumer.name, subscriptions };
    });
  const exchanges = [...new Set(events.map((event) => event.rabbitmq.exchange))].sort(
    compareStrings,
  );
  const body = renderTemplate('rabbitmq-topology', { runtimeImport, exchanges, consumers });
  return { path: RABBITMQ_TOPOLOGY_PATH, body, sources };
}

function renderPublishers(catalog: Catalog, runtimeImport: string): TargetFile | undefined {
  // Routes and publish helpers for what this repository produces, not for its dependencies.
  const published = rabbitEvents(catalog.events.filter(isProduced));
  if (published.length === 0) return undefined;
  const events = [...published]
    .sort((a, b) => compareStrings(a.eventType, b.eventType))
    .map((event) => ({
      eventType: event.eventType,
      exchange: event.rabbitmq.exchange,
      routingKey: event.rabbitmq.routingKey,
      envelopeUnion: eventNames(event).envelopeUnion,
      functionName: rabbitPublishFunctionName(event),
      importPath: relativeImport(RABBITMQ_PUBLISHERS_PATH, `${eventModuleDir(event)}/envelope.js`),
    }));
  const body = renderTemplate('rabbitmq-publishers', { runtimeImport, events });
  return { path: RABBITMQ_PUBLISHERS_PATH, body, sources: published.map(eventJson) };
}

export const rabbitmqTarget: Target = {
  name: 'rabbitmq',
  requires: ['envelopes'],
  readsSchemas: false,
  async generate(context: TargetContext): Promise<readonly TargetFile[]> {
    // Nothing to write when no event is published on RabbitMQ (an empty or Kafka-only catalog).
    if (rabbitEvents(context.catalog.events).length === 0) return [];
    const publishers = renderPublishers(context.catalog, context.runtimeImport);
    return [
      ...(publishers === undefined ? [] : [publishers]),
      renderTopology(context.catalog, context.runtimeImport),
    ];
  },
};
