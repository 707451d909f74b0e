/**
 * The bench event's v1 registered in the shared test registry (started when it does not answer),
 * annotated as `evgen registry push` annotates it, under a subject of its own: the framing rows
 * of the relay and consumer benches take their schema id from here, as a service would.
 */
import { randomBytes } from 'node:crypto';
import { createSchemaRegistryClient } from '../../src/runtime/index.js';
import { ensureSharedRegistry, TEST_REGISTRY_URL } from '../support/registry/apicurio.js';
import { stockCountedEvent } from './stock-counted.js';

export interface RegisteredStockCounted {
  readonly subject: string;
  /** The registry's id of the subject's version 1. */
  readonly id: number;
  /** Deletes the subject (soft, then permanent). */
  remove(): Promise<void>;
}

export async function registerStockCounted(): Promise<RegisteredStockCounted> {
  await ensureSharedRegistry();
  const registry = createSchemaRegistryClient({ url: TEST_REGISTRY_URL });
  const { eventType } = stockCountedEvent();
  const subject = `evgen-bench-${randomBytes(4).toString('hex')}.${eventType}`;
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { payload: { type: 'object' } },
    'x-evgen': { eventType, version: 1 },
  };
  const id = await registry.register(subject, JSON.stringify(schema));
  return {
    subject,
    id,
    remove: async () => {
      await registry.deleteSubject(subject);
      await registry.deleteSubject(subject, true);
    },
  };
}
