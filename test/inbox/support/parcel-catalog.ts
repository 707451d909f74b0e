/**
 * An in-memory catalog with the parcel test events and one consumer, plus the envelope modules
 * the consumers target imports (re-exporting the hand-written descriptors), written into a
 * fixture folder so tests can import and type-check generated consumers without the envelopes target.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalog, EventDefinition } from 'evgen';

const schema = { type: 'object' };

function event(name: string, versions: number[]): EventDefinition {
  return {
    domain: 'parcel',
    name,
    eventType: `parcel.${name}`,
    description: `${name} happened.`,
    aggregate: 'Parcel',
    aggregateId: 'parcelId',
    compatibility: 'BACKWARD',
    policy: 'evgen',
    kafka: { topic: 'parcel.events' },
    rabbitmq: { exchange: 'parcel', routingKey: `parcel.${name}` },
    dir: `parcel/${name}`,
    versions: versions.map((version) => ({
      version,
      file: `parcel/${name}/v${version}.schema.json`,
      schema,
      bundled: schema,
    })),
  };
}

/** `sentVersions`: which ParcelSent versions exist (the tests add v2 later to mimic a new version). */
export function parcelCatalog(sentVersions: number[] = [1, 2]): Catalog {
  return {
    root: '/virtual/events',
    events: [event('ParcelLost', [1]), event('ParcelSent', sentVersions)],
    consumers: [
      {
        name: 'parcel-tracker',
        description: 'Tracks parcels; */ not a comment end.',
        file: '_consumers/parcel-tracker.json',
        subscribes: ['parcel.ParcelLost', 'parcel.ParcelSent'],
      },
    ],
  };
}

const testEvents = fileURLToPath(new URL('./test-events.ts', import.meta.url));

/** Writes `parcel/<event>/envelope.ts` modules under `outDir` that re-export the test descriptors. */
export function writeParcelEnvelopeModules(outDir: string): void {
  const modules: Record<string, string[]> = {
    'parcel/parcel-sent/envelope.ts': [
      'parcelSentV1 as parcelSentV1Descriptor',
      'parcelSentV2 as parcelSentV2Descriptor',
      'type ParcelSentV1Envelope',
      'type ParcelSentV2Envelope',
    ],
    'parcel/parcel-lost/envelope.ts': [
      'parcelLostV1 as parcelLostV1Descriptor',
      'type ParcelLostV1Envelope',
    ],
  };
  for (const [path, exports] of Object.entries(modules)) {
    const file = join(outDir, path);
    mkdirSync(dirname(file), { recursive: true });
    const from = relative(dirname(file), testEvents).replace(/\.ts$/, '.js');
    writeFileSync(
      file,
      `export { ${exports.join(', ')} } from '${from.startsWith('.') ? from : `./${from}`}';\n`,
    );
  }
}
