/**
 * Target `consumers`: one module per consumer in `events/_consumers/`, at
 * `consumers/<consumer-name>.ts`, with typed handler and upcaster tables and a factory that
 * binds them to the runtime's `createInboxConsumer` (parse, validate, upcast, inbox guard). The
 * generated code stays thin: descriptors and envelope types come from each event's
 * `envelope.ts` (envelopes target), behaviour from `evgen-runtime`.
 */
import type { Catalog, ConsumerDefinition, EventDefinition } from '../../catalog/model.js';
import {
  camelCase,
  eventModuleDir,
  kebabCase,
  pascalCase,
  versionNames,
  versionTypeName,
} from '../../common/naming.js';
import { renderTemplate } from '../render/index.js';
import type { TargetFile, Target, TargetContext } from '../target.js';
import { compareStrings } from '../../common/json-value.js';
import { relativeImport } from './event-files.js';

/** Output path of a consumer's module: `consumers/inventory-service.ts`. */
export function consumerModulePath(consumer: Pick<ConsumerDefinition, 'name'>): string {
  return `consumers/${kebabCase(consumer.name)}.ts`;
}

/** Names a consumer module exports; the scaffolder imports the same ones. */
export function consumerNames(consumer: Pick<ConsumerDefinition, 'name'>) {
  const base = pascalCase(consumer.name);
  return {
    nameConst: `${camelCase(consumer.name)}ConsumerName`,
    subscribesConst: `${camelCase(consumer.name)}Subscribes`,
    handlersType: `${base}Handlers`,
    upcastersType: `${base}Upcasters`,
    optionsType: `${base}ConsumerOptions`,
    factoryName: `create${base}Consumer`,
    /** `InventoryServiceOrderCreatedV2Handler` */
    handlerType: (event: Pick<EventDefinition, 'name'>, version: number) =>
      `${base}${versionTypeName(event, version)}Handler`,
    /** `InventoryServiceOrderCreatedV1ToV2Upcaster` */
    upcasterType: (event: Pick<EventDefinition, 'name'>, from: number) =>
      `${base}${versionTypeName(event, from)}ToV${from + 1}Upcaster`,
  } as const;
}

/** Key of an upcaster in the upcaster table: `v1ToV2` (the runtime's `upcasterKey`). */
export function upcasterKey(from: number): string {
  return `v${from}ToV${from + 1}`;
}

/** The events a consumer subscribes to, in its (sorted) subscription order; unknown types throw. */
export function subscribedEvents(
  catalog: Catalog,
  consumer: ConsumerDefinition,
): EventDefinition[] {
  return consumer.subscribes.map((eventType) => {
    const event = catalog.events.find((candidate) => candidate.eventType === eventType);
    if (event === undefined)
      throw new Error(`consumer ${consumer.name} subscribes to unknown event type ${eventType}`);
    return event;
  });
}

function renderConsumer(
  catalog: Catalog,
  consumer: ConsumerDefinition,
  runtimeImport: string,
): TargetFile {
  const names = consumerNames(consumer);
  const path = consumerModulePath(consumer);
  const events = subscribedEvents(catalog, consumer);
  const imports = new Map<string, { path: string; values: string[]; types: string[] }>();
  const sources = [consumer.file];
  const eventContexts = events.map((event) => {
    const modulePath = relativeImport(path, `${eventModuleDir(event)}/envelope.js`);
    const entry = imports.get(modulePath) ?? { path: modulePath, values: [], types: [] };
    imports.set(modulePath, entry);
    const latest = event.versions[event.versions.length - 1]!.version;
    const versions = event.versions.map(({ version, file }) => {
      sources.push(file);
      const v = versionNames(event, version);
      entry.values.push(v.descriptorName);
      entry.types.push(v.envelopeType);
      return {
        version,
        latest: version === latest,
        handlerType: names.handlerType(event, version),
        envelopeType: v.envelopeType,
        descriptorName: v.descriptorName,
      };
    });
    const upcasters = event.versions.slice(0, -1).map(({ version }) => ({
      from: version,
      to: version + 1,
      key: upcasterKey(version),
      upcasterType: names.upcasterType(event, version),
      fromEnvelope: versionNames(event, version).envelopeType,
      toEnvelope: versionNames(event, version + 1).envelopeType,
    }));
    return { eventType: event.eventType, versions, upcasters };
  });
  const body = renderTemplate('consumer', {
    description: `${consumer.description ? `${consumer.description}\n\n` : ''}The consumer's name: its inbox key and the stem of its queue names.`,
    runtimeImport,
    imports: [...imports.values()]
      .sort((a, b) => compareStrings(a.path, b.path))
      .map((entry) => ({
        path: entry.path,
        values: [...entry.values].sort(),
        types: [...entry.types].sort(),
      })),
    name: consumer.name,
    events: eventContexts,
    // Only consumers of multi-version events import `Upcaster` and get a non-empty table type.
    hasUpcasters: eventContexts.some((event) => event.upcasters.length > 0),
    exampleUpcaster: upcasterKey(1),
    allowGaps: consumer.inOrder === 'allow-gaps',
    ...names,
  });
  return { path, body, sources };
}

/** `consumers/x.ts` importing `order/order-created/envelope.js` → `../order/order-created/envelope.js`. */
export const consumersTarget: Target = {
  name: 'consumers',
  requires: ['envelopes'],
  readsSchemas: false,
  async generate(context: TargetContext): Promise<readonly TargetFile[]> {
    const files: TargetFile[] = [];
    for (const consumer of context.catalog.consumers) {
      files.push(renderConsumer(context.catalog, consumer, context.runtimeImport));
    }
    return files.sort((a, b) => compareStrings(a.path, b.path));
  },
};
