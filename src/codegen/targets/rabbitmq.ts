/**
 * Target `rabbitmq`: the broker side of the catalog.
 *   rabbitmq/topology.ts    `rabbitTopology` (domain exchanges, consumers and their subscriptions)
 *                           for the runtime's `assertTopology`;
 *   rabbitmq/publishers.ts  `rabbitRoutes` (event type → exchange + routing key) for the outbox
 *                           relay, and `publishOrderCreated(publisher, envelope)` per event, so no
 *                           call site spells an exchange or routing key.
 * Envelope types come from each event's `envelope.ts` (envelopes target).
 */
import { posix } from 'node:path';
import type { Catalog, EventDefinition } from '../../catalog/model.js';
import { eventModuleDir, eventNames, pascalCase } from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { TargetFile, Target, TargetContext } from '../target.js';
import { compareStrings } from '../../common/json-value.js';

export const RABBITMQ_TOPOLOGY_PATH = 'rabbitmq/topology.ts';
export const RABBITMQ_PUBLISHERS_PATH = 'rabbitmq/publishers.ts';

/** `publishOrderCreated`: the generated producer helper of an event. */
export function rabbitPublishFunctionName(event: Pick<EventDefinition, 'name'>): string {
  return `publish${pascalCase(event.name)}`;
}

function eventJson(event: EventDefinition): string {
  return `${event.dir}/event.json`;
}

function relativeImport(fromFile: string, toFile: string): string {
  const relative = posix.relative(posix.dirname(fromFile), toFile);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

function renderTopology(catalog: Catalog, runtimeImport: string): TargetFile {
  const byType = new Map(catalog.events.map((event) => [event.eventType, event]));
  const sources = catalog.events.map(eventJson);
  const consumers = [...catalog.consumers]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((consumer) => {
      sources.push(consumer.file);
      const subscriptions = [...consumer.subscribes].sort(compareStrings).map((eventType) => {
        const event = byType.get(eventType);
        if (event === undefined)
          throw new Error(
            `consumer ${consumer.name} subscribes to unknown event type ${eventType}`,
          );
        return {
          eventType,
          exchange: event.rabbitmq.exchange,
          routingKey: event.rabbitmq.routingKey,
        };
      });
      return { name: consumer.name, subscriptions };
    });
  const exchanges = [...new Set(catalog.events.map((event) => event.rabbitmq.exchange))].sort(
    compareStrings,
  );
  const body = renderTemplate('rabbitmq-topology', { runtimeImport, exchanges, consumers });
  return { path: RABBITMQ_TOPOLOGY_PATH, body, sources };
}

function renderPublishers(catalog: Catalog, runtimeImport: string): TargetFile {
  const events = [...catalog.events]
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
  return { path: RABBITMQ_PUBLISHERS_PATH, body, sources: catalog.events.map(eventJson) };
}

export const rabbitmqTarget: Target = {
  name: 'rabbitmq',
  requires: ['envelopes'],
  readsSchemas: false,
  async generate(context: TargetContext): Promise<readonly TargetFile[]> {
    if (context.catalog.events.length === 0) return [];
    return [
      renderPublishers(context.catalog, context.runtimeImport),
      renderTopology(context.catalog, context.runtimeImport),
    ];
  },
};
