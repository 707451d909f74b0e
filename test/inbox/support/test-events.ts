/**
 * A small hand-written event with two versions, described the way generated code describes
 * events (EventVersionDescriptor with ajv validators), for runtime tests that must not depend
 * on the generator.
 */
import { Ajv } from 'ajv';
import {
  createEnvelope,
  newMessageId,
  payloadValidator,
  type Envelope,
  type EventVersionDescriptor,
} from 'evgen/runtime';

export interface ParcelSentV1Payload {
  parcelId: string;
  weightGrams: number;
}
export interface ParcelSentV2Payload {
  parcelId: string;
  weight: { value: number; unit: 'g' | 'kg' };
}
export interface ParcelLostV1Payload {
  parcelId: string;
  reason: string;
}
export type ParcelSentV1Envelope = Envelope<'parcel.ParcelSent', 1, ParcelSentV1Payload>;
export type ParcelSentV2Envelope = Envelope<'parcel.ParcelSent', 2, ParcelSentV2Payload>;
export type ParcelLostV1Envelope = Envelope<'parcel.ParcelLost', 1, ParcelLostV1Payload>;

const ajv = new Ajv({ allErrors: true });

function descriptor<TType extends string, TVersion extends number, T>(
  eventType: TType,
  schemaVersion: TVersion,
  schema: object,
): EventVersionDescriptor<TType, TVersion, T> {
  const validate = payloadValidator<T>(ajv.compile(schema));
  return {
    eventType,
    schemaVersion,
    aggregateType: 'Parcel',
    aggregateIdProperty: 'parcelId',
    validatePayload: validate,
    readPayload: validate,
  };
}

export const parcelSentV1 = descriptor<'parcel.ParcelSent', 1, ParcelSentV1Payload>(
  'parcel.ParcelSent',
  1,
  {
    type: 'object',
    properties: { parcelId: { type: 'string' }, weightGrams: { type: 'integer', minimum: 1 } },
    required: ['parcelId', 'weightGrams'],
  },
);
export const parcelSentV2 = descriptor<'parcel.ParcelSent', 2, ParcelSentV2Payload>(
  'parcel.ParcelSent',
  2,
  {
    type: 'object',
    properties: {
      parcelId: { type: 'string' },
      weight: {
        type: 'object',
        properties: { value: { type: 'number', exclusiveMinimum: 0 }, unit: { enum: ['g', 'kg'] } },
        required: ['value', 'unit'],
      },
    },
    required: ['parcelId', 'weight'],
  },
);
export const parcelLostV1 = descriptor<'parcel.ParcelLost', 1, ParcelLostV1Payload>(
  'parcel.ParcelLost',
  1,
  {
    type: 'object',
    properties: { parcelId: { type: 'string' }, reason: { type: 'string' } },
    required: ['parcelId', 'reason'],
  },
);

export const parcelDescriptors = [parcelLostV1, parcelSentV1, parcelSentV2];

export function sentV1(parcelId = newMessageId(), aggregateVersion?: number): ParcelSentV1Envelope {
  return createEnvelope(
    parcelSentV1,
    { parcelId, weightGrams: 1500 },
    aggregateVersion === undefined ? {} : { aggregateVersion },
  );
}
export function sentV2(parcelId = newMessageId(), aggregateVersion?: number): ParcelSentV2Envelope {
  return createEnvelope(
    parcelSentV2,
    { parcelId, weight: { value: 2, unit: 'kg' } },
    aggregateVersion === undefined ? {} : { aggregateVersion },
  );
}
export function lostV1(parcelId = newMessageId(), aggregateVersion?: number): ParcelLostV1Envelope {
  return createEnvelope(
    parcelLostV1,
    { parcelId, reason: 'fell off the truck' },
    aggregateVersion === undefined ? {} : { aggregateVersion },
  );
}
