/**
 * Target `pulsar`: the Pulsar side of the catalog.
 *   pulsar/topology.ts    `pulsarTopology` (event topics with their declared partitions, consumers
 *                         with the topics of their subscriptions) and
 *                         `ensurePulsarTopics(connection, options?)`;
 *   pulsar/publishers.ts  `pulsarRoutes` (event type → tenant / namespace / topic) for the outbox
 *                         relay, and `publishOrderCreated(producers, envelope)` per event the
 *                         repository produces (none of a dependency catalog's): key = aggregateId,
 *                         the envelope's ids as message properties under Kafka's header names.
 * Envelope types come from each event's `envelope.ts` (envelopes target).
 */
import { pulsarEvents, type EventOn } from '../../catalog/event-transports.js';
import {
  DEFAULT_PULSAR_NAMESPACE,
  DEFAULT_PULSAR_TENANT,
  type Catalog,
  type EventDefinition,
} from '../../catalog/model.js';
import { isProduced } from '../../catalog/produced-events.js';
import { compareStrings } from '../../common/json-value.js';
import { eventModuleDir, eventNames, pascalCase } from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { Target, TargetContext, TargetFile } from '../target.js';
import { subscribedEvents } from './consumers.js';
import { eventJson, relativeImport } from './event-files.js';

export const PULSAR_TOPOLOGY_PATH = 'pulsar/topology.ts';
export const PULSAR_PUBLISHERS_PATH = 'pulsar/publishers.ts';

/** `publishOrderCreated`: the generated Pulsar producer helper of an event. */
export function pulsarPublishFunctionName(event: Pick<EventDefinition, 'name'>): string {
  return `publish${pascalCase(event.name)}`;
}

/** An event's route with the defaults written out, so the generated file says where it goes. */
interface Route {
  tenant: string;
  namespace: string;
  topic: string;
  partitions?: number | undefined;
}

function route(event: EventOn<'pulsar'>): Route {
  return {
    tenant: event.pulsar.tenant ?? DEFAULT_PULSAR_TENANT,
    namespace: event.pulsar.namespace ?? DEFAULT_PULSAR_NAMESPACE,
    topic: event.pulsar.topic,
  };
}

const routeKey = (r: Route) => `${r.tenant}/${r.namespace}/${r.topic}`;

function renderTopology(catalog: Catalog, runtimeImport: string): TargetFile {
  const events = pulsarEvents(catalog.events).sort((a, b) =>
    compareStrings(a.eventType, b.eventType),
  );
  const sources = events.map(eventJson);
  // One entry per topic; the loader refused events of one topic declaring different partitions,
  // so the first declaration is the topic's.
  const topics = new Map<string, Route>();
  for (const event of events) {
    const key = routeKey(route(event));
    const topic = topics.get(key) ?? route(event);
    topic.partitions ??= event.pulsar.partitions;
    topics.set(key, topic);
  }
  // A consumer's Pulsar subscriptions are those of its events that are on Pulsar; a consumer of
  // events on other brokers only has none.
  const consumers = [...catalog.consumers]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((consumer) => ({ consumer, events: pulsarEvents(subscribedEvents(catalog, consumer)) }))
    .filter(({ events: subscribed }) => subscribed.length > 0)
    .map(({ consumer, events: subscribed }) => {
      sources.push(consumer.file);
      const subscriptions = subscribed
        .map((event) => ({ eventType: event.eventType, ...route(event) }))
        .sort((a, b) => compareStrings(a.eventType, b.eventType));
      return { name: consumer.name, subscriptions };
    });
  const body = renderTemplate('pulsar-topology', {
    runtimeImport,
    topics: [...topics.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([, topic]) => ({ ...topic, partitioned: topic.partitions !== undefined })),
    consumers,
  });
  return { path: PULSAR_TOPOLOGY_PATH, body, sources };
}

function renderPublishers(catalog: Catalog, runtimeImport: string): TargetFile | undefined {
  // Routes and publish helpers for what this repository produces, not for its dependencies.
  const published = pulsarEvents(catalog.events.filter(isProduced)).sort((a, b) =>
    compareStrings(a.eventType, b.eventType),
  );
  if (published.length === 0) return undefined;
  const events = published.map((event) => ({
    eventType: event.eventType,
    ...route(event),
    envelopeUnion: eventNames(event).envelopeUnion,
    functionName: pulsarPublishFunctionName(event),
    importPath: relativeImport(PULSAR_PUBLISHERS_PATH, `${eventModuleDir(event)}/envelope.js`),
  }));
  const body = renderTemplate('pulsar-publishers', { runtimeImport, events });
  return { path: PULSAR_PUBLISHERS_PATH, body, sources: published.map(eventJson) };
}

export const pulsarTarget: Target = {
  name: 'pulsar',
  requires: ['envelopes'],
  readsSchemas: false,
  generate(context: TargetContext): readonly TargetFile[] {
    // Nothing to write when no event is published on Pulsar.
    if (pulsarEvents(context.catalog.events).length === 0) return [];
    const publishers = renderPublishers(context.catalog, context.runtimeImport);
    return [
      ...(publishers === undefined ? [] : [publishers]),
      renderTopology(context.catalog, context.runtimeImport),
    ];
  },
};
