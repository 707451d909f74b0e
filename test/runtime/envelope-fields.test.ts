/**
 * createEnvelope and parseEnvelope check envelope fields with one table (envelope-fields.ts):
 * a bad field a caller sets is refused by the constructor with exactly the violation a consumer
 * would report for it, and what the constructor builds the parser accepts.
 */
import { describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createEnvelopeParser,
  ValidationError,
  type EventVersionDescriptor,
  type Violation,
} from '../../src/runtime/index.js';
import {
  checkField,
  ENVELOPE_FIELDS,
  envelopeFieldsValid,
} from '../../src/runtime/envelope-fields.js';

const accept = (value: unknown) => ({ ok: true as const, value });
const descriptor: EventVersionDescriptor<'shop.Parcel', 1, { parcelId: string }> = {
  eventType: 'shop.Parcel',
  schemaVersion: 1,
  aggregateType: 'Parcel',
  aggregateIdProperty: 'parcelId',
  validatePayload: accept as EventVersionDescriptor<
    'shop.Parcel',
    1,
    { parcelId: string }
  >['validatePayload'],
  readPayload: accept as EventVersionDescriptor<
    'shop.Parcel',
    1,
    { parcelId: string }
  >['readPayload'],
};
const parse = createEnvelopeParser([descriptor]);
const payload = { parcelId: 'p-1' };

function constructorViolations(meta: Record<string, unknown>): readonly Violation[] {
  try {
    createEnvelope(descriptor, payload, meta);
  } catch (error) {
    if (error instanceof ValidationError) return error.violations;
    throw error;
  }
  return [];
}

function parserViolations(fields: Record<string, unknown>): readonly Violation[] {
  const good = createEnvelope(descriptor, payload);
  const result = parse({ ...good, ...fields });
  if (result.ok) return [];
  if (!(result.error instanceof ValidationError)) throw result.error;
  return result.error.violations;
}

describe('envelope field checks shared by createEnvelope and parseEnvelope', () => {
  const bad: Record<string, unknown>[] = [
    { messageId: 'not-a-uuid' },
    { messageId: '' },
    { messageId: 42 },
    { occurredAt: '2024-02-30T00:00:00Z' },
    { occurredAt: 'yesterday' },
    { aggregateVersion: -1 },
    { aggregateVersion: 1.5 },
    { traceId: 7 },
    { correlationId: {} },
    { causationId: false },
    { messageId: 'x', occurredAt: 'y', aggregateVersion: -2 },
  ];
  it.each(bad)('%o: the same violations on both sides', (fields) => {
    const fromConstructor = constructorViolations(fields);
    expect(fromConstructor.length).toBeGreaterThan(0);
    expect(fromConstructor).toEqual(parserViolations(fields));
  });

  it('what the constructor builds with every caller field set, the parser accepts', () => {
    const envelope = createEnvelope(descriptor, payload, {
      messageId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      occurredAt: new Date('2024-02-29T12:00:00Z'),
      aggregateVersion: 3,
      traceId: 't',
      correlationId: 'c',
      causationId: 'k',
    });
    expect(parse(JSON.stringify(envelope))).toEqual({ ok: true, envelope });
  });

  it('the written-out check of all fields agrees with the table, field by field', () => {
    const good: Record<string, unknown> = {
      ...createEnvelope(descriptor, payload),
      aggregateVersion: 0,
      traceId: 't',
      correlationId: 'c',
      causationId: 'k',
    };
    const candidates: unknown[] = [
      undefined,
      null,
      '',
      'x',
      ' ',
      0,
      1,
      -1,
      1.5,
      2 ** 53,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '1',
      true,
      {},
      [],
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5',
      '2024-02-29T12:00:00Z',
      '2024-02-30T12:00:00Z',
    ];
    const tableSays = (record: Record<string, unknown>) =>
      ENVELOPE_FIELDS.every((field) => checkField(field, record[field.name], []));
    expect(envelopeFieldsValid(good)).toBe(true);
    let refused = 0;
    for (const field of ENVELOPE_FIELDS) {
      for (const value of candidates) {
        const record = { ...good, [field.name]: value };
        if (value === undefined) delete record[field.name];
        expect([field.name, value, envelopeFieldsValid(record)]).toEqual([
          field.name,
          value,
          tableSays(record),
        ]);
        if (!tableSays(record)) refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
  });
});
