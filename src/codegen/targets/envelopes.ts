/**
 * Target `envelopes`: `<event dir>/envelope.ts` with, per version, the descriptor the runtime
 * works from (`orderCreatedV2Descriptor`), the envelope type (`OrderCreatedV2Envelope`) and the
 * constructor (`orderCreatedV2(payload, meta?)`, which takes the aggregate id from the payload),
 * plus the union over versions (`OrderCreatedEnvelope`) and the list `orderCreatedDescriptors`.
 */
import { eventNames, versionNames } from '../../common/naming.js';
import { renderTemplate } from '../render/templates.js';
import type { TargetFile, Target } from '../target.js';
import { eventFile } from './event-files.js';

export const envelopesTarget: Target = {
  name: 'envelopes',
  requires: ['types', 'validators'],
  scope: 'event',
  async generate({ catalog, runtimeImport }) {
    const files: TargetFile[] = [];
    for (const event of catalog.events) {
      const body = renderTemplate('envelope', {
        runtimeImport,
        eventType: event.eventType,
        description: event.description,
        aggregate: event.aggregate,
        aggregateId: event.aggregateId,
        // A consumer reads a version newer than it knows only when this mode says old readers can.
        compatibility: event.compatibility,
        kafka: event.kafka,
        rabbitmq: event.rabbitmq,
        ...eventNames(event),
        versions: event.versions.map((version) => ({
          ...versionNames(event, version.version),
          version: version.version,
        })),
      });
      files.push({ ...eventFile(event, 'envelope.ts', body), laidOut: true });
    }
    return files;
  },
};
