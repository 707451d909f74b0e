/**
 * A hand-written event described the way generated code describes one (strict ajv writer
 * validator, tolerant reader), so runtime tests do not depend on the generator.
 */
import { Ajv } from 'ajv';
import { payloadValidator, type EventVersionDescriptor } from 'evgen/runtime';

export interface OrderPlacedV1Payload {
  orderId: string;
  amount: number;
  note?: string;
}

const schema = {
  type: 'object',
  required: ['orderId', 'amount'],
  properties: {
    orderId: { type: 'string', minLength: 1 },
    amount: { type: 'integer', minimum: 0 },
    note: { type: 'string' },
  },
};

const ajv = new Ajv({ allErrors: true, strict: true });
const strict = ajv.compile({ ...schema, additionalProperties: false });
const tolerant = ajv.compile(schema);

export const orderPlacedV1: EventVersionDescriptor<'test.OrderPlaced', 1, OrderPlacedV1Payload> = {
  eventType: 'test.OrderPlaced',
  schemaVersion: 1,
  aggregateType: 'Order',
  aggregateIdProperty: 'orderId',
  validatePayload: payloadValidator<OrderPlacedV1Payload>(strict),
  readPayload: payloadValidator<OrderPlacedV1Payload>(tolerant),
};
