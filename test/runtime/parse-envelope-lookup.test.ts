/**
 * parseEnvelope remembers the last event type it looked up; whatever order types, unknown types
 * and unknown versions arrive in, each message gets its own descriptor or its own error.
 */
import { describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createEnvelopeParser,
  UnknownEventError,
  type EventVersionDescriptor,
} from '../../src/runtime/index.js';

const accept = (value: unknown) => ({ ok: true as const, value });
function descriptor(eventType: string, schemaVersion: number): EventVersionDescriptor {
  return {
    eventType,
    schemaVersion,
    aggregateType: 'Thing',
    aggregateIdProperty: 'id',
    validatePayload: accept,
    readPayload: accept,
  };
}

describe('parseEnvelope type lookup', () => {
  it('finds each message its descriptor in any order of types and unknowns', () => {
    const a1 = descriptor('shop.A', 1);
    const a2 = descriptor('shop.A', 2);
    const b1 = descriptor('shop.B', 1);
    const parse = createEnvelopeParser([a1, a2, b1]);
    const text = (d: EventVersionDescriptor, overrides: Record<string, unknown> = {}) =>
      JSON.stringify({ ...createEnvelope(d, { id: 'x-1' }), ...overrides });
    const outcome = (input: string) => {
      const result = parse(input);
      if (result.ok) return `${result.envelope.eventType} v${result.envelope.schemaVersion}`;
      return result.error instanceof UnknownEventError ? 'unknown' : 'invalid';
    };
    const sequence: [string, string][] = [
      [text(a1), 'shop.A v1'],
      [text(a2), 'shop.A v2'],
      [text(b1), 'shop.B v1'],
      [text(a1, { schemaVersion: 3 }), 'unknown'],
      [text(a1), 'shop.A v1'],
      [text(a1, { eventType: 'shop.C' }), 'unknown'],
      [text(a1, { eventType: 'shop.C' }), 'unknown'],
      [text(b1, { schemaVersion: 2 }), 'unknown'],
      [text(b1), 'shop.B v1'],
      [text(b1, { eventType: 'shop.A' }), 'shop.A v1'],
      [text(a1, { eventType: '' }), 'invalid'],
      [text(a2), 'shop.A v2'],
    ];
    expect(sequence.map(([input]) => outcome(input))).toEqual(sequence.map(([, want]) => want));
  });
});
