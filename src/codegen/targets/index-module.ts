/**
 * Target `index`: the top of the output folder.
 *
 * - `catalog.ts`: `EnvelopeMap` (`EnvelopeMap['order.OrderCreated'][2]`), `EventType`,
 *   `EnvelopeOfType`, `AnyEnvelope` (a union up to `UNION_ENVELOPE_LIMIT` versions), the
 *   `isEventType` guard, the `descriptors` registry and `parseEnvelope` (the runtime's
 *   `createEnvelopeParser` over every descriptor).
 * - `index.ts`: re-exports `catalog.ts` and every event's types, validators and envelopes.
 *
 * Every exported name is checked for collisions across events: two events that would export
 * the same name are reported, never silently shadowed by `export *`.
 */
import { CatalogError, type CatalogProblem } from '../../catalog/catalog-error.js';
import { eventModuleDir, eventNames, versionNames } from '../../common/naming.js';
import { renderTemplate } from '../render/templates.js';
import type { Target } from '../target.js';
import { eventSources } from './event-files.js';

const CATALOG_NAMES = [
  'AnyEnvelope',
  'EnvelopeMap',
  'EnvelopeOfType',
  'EventType',
  'descriptors',
  'isEventType',
  'parseEnvelope',
];

/**
 * Up to this many event versions `AnyEnvelope` is the discriminated union of every version's
 * envelope; above it, the common envelope type. TypeScript gives up (TS2590) on an expression
 * whose union needs more than about a million subtype checks, i.e. a union of ~1000 object types
 * (`r.ok ? r.envelope : undefined` at 500 events of 2–3 versions); half of that leaves room for
 * the unions services build on top.
 */
export const UNION_ENVELOPE_LIMIT = 500;

export const indexModuleTarget: Target = {
  name: 'index',
  requires: ['envelopes', 'types', 'validators'],
  readsSchemas: false,
  async generate({ catalog, runtimeImport }) {
    const owners = new Map<string, string>(CATALOG_NAMES.map((name) => [name, 'catalog.ts']));
    const problems: CatalogProblem[] = [];
    const events = catalog.events.map((event) => {
      const names = eventNames(event);
      const versions = event.versions.map((version) => ({
        ...versionNames(event, version.version),
        version: version.version,
      }));
      const exported = [
        names.payloadUnion,
        names.envelopeUnion,
        names.descriptorList,
        ...versions.flatMap((v) =>
          Object.values(v).filter((x): x is string => typeof x === 'string'),
        ),
      ];
      for (const name of exported) {
        const owner = owners.get(name);
        if (owner !== undefined && owner !== event.eventType) {
          problems.push({
            code: 'generated-name-collision',
            file: `${event.dir}/event.json`,
            pointer: '',
            message: `${event.eventType} and ${owner} would both export ${name}`,
            hint: 'rename one of the events (the folder name decides the TypeScript names)',
          });
        }
        owners.set(name, event.eventType);
      }
      const dir = `./${eventModuleDir(event)}`;
      return {
        eventType: event.eventType,
        envelopeModule: `${dir}/envelope.js`,
        typesModule: `${dir}/types.js`,
        validatorsModule: `${dir}/validators.js`,
        versions,
        ...names,
      };
    });
    if (problems.length > 0) throw new CatalogError(problems);

    const sources = catalog.events.flatMap(eventSources);
    // An empty catalog still gets valid modules (AnyEnvelope = never), so a new project builds.
    const versionCount = events.reduce((sum, event) => sum + event.versions.length, 0);
    const context = {
      runtimeImport,
      events,
      hasEvents: events.length > 0,
      versionCount,
      unionEnvelope: versionCount <= UNION_ENVELOPE_LIMIT,
    };
    return [
      { path: 'catalog.ts', body: renderTemplate('catalog', context), sources },
      { path: 'index.ts', body: renderTemplate('index', context), sources },
    ];
  },
};
