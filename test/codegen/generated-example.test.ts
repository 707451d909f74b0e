/**
 * The committed example output in `generated/`, imported and run: constructors, strict writer
 * and tolerant reader validators, parseEnvelope and its narrowing. Type-level assertions are
 * checked by `tsc --noEmit` (this file is part of the repo's tsconfig).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createEnvelope, UnknownEventError, ValidationError, type Violation } from 'evgen/runtime';
import {
  descriptors,
  orderCreatedV1,
  orderCreatedV2,
  orderCreatedV2Descriptor,
  parseEnvelope,
  readOrderCreatedV1Payload,
  readOrderCreatedV2Payload,
  validateOrderCreatedV1Payload,
  validateOrderCreatedV2Payload,
  type AnyEnvelope,
  type EnvelopeMap,
  type EventType,
  type OrderCreatedEnvelope,
  type OrderCreatedV2Envelope,
  type OrderCreatedV2Payload,
  type OrderPaidV1Payload,
} from '../../generated/index.js';

const ORDER_ID = '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f';

function payload(): OrderCreatedV2Payload {
  return {
    orderId: ORDER_ID,
    customerId: '0190a6a4-1f2b-7c3d-8e4f-000000000001',
    placedAt: '2026-11-29T10:00:00Z',
    channel: 'web',
    lines: [{ sku: 'SKU-001', quantity: 2, unitPrice: { amountMinor: 1250, currency: 'EUR' } }],
    total: { amountMinor: 2500, currency: 'EUR' },
    shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    couponCode: 'WELCOME10',
  };
}

function pointers(violations: readonly Violation[]): string[] {
  return violations.map((violation) => violation.pointer).sort();
}

function envelopeJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...JSON.parse(JSON.stringify(orderCreatedV2(payload(), { traceId: 'trace-1' }))),
    ...overrides,
  };
}

describe('generated constructors', () => {
  it('build an envelope whose aggregateId comes from the payload', () => {
    const envelope = orderCreatedV2(payload(), {
      correlationId: 'c-1',
      occurredAt: new Date('2026-11-29T10:00:01Z'),
    });
    expect(envelope).toMatchObject({
      eventType: 'order.OrderCreated',
      schemaVersion: 2,
      aggregateType: 'Order',
      aggregateId: ORDER_ID,
      occurredAt: '2026-11-29T10:00:01.000Z',
      correlationId: 'c-1',
    });
    expect(envelope.messageId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expectTypeOf(envelope).toEqualTypeOf<OrderCreatedV2Envelope>();
  });

  it('reject an invalid payload listing every violation with its pointer', () => {
    const bad = {
      ...payload(),
      channel: 'fax',
      lines: [{ sku: 'x', quantity: 0, unitPrice: { amountMinor: -1, currency: 'EUR' } }],
    };
    let error: unknown;
    try {
      orderCreatedV2(bad as unknown as OrderCreatedV2Payload);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(pointers((error as ValidationError).violations)).toEqual([
      '/channel',
      '/lines/0/quantity',
      '/lines/0/sku',
      '/lines/0/unitPrice/amountMinor',
    ]);
  });

  it('refuse envelope fields that parseEnvelope would reject, listing every one with its pointer', () => {
    let error: unknown;
    try {
      orderCreatedV2(payload(), {
        messageId: 'not-a-uuid',
        occurredAt: 'yesterday',
        aggregateVersion: -1,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).violations.map((v) => `${v.pointer} ${v.keyword}`)).toEqual([
      '/messageId format',
      '/occurredAt format',
      '/aggregateVersion type',
    ]);
    expect(() => orderCreatedV2(payload(), { occurredAt: new Date('not a date') })).toThrow(
      ValidationError,
    );
    expect(() => orderCreatedV2(payload(), { aggregateVersion: 1.5 })).toThrow(ValidationError);
    // What a constructor accepts, parseEnvelope accepts: a valid caller-chosen id and time round-trip.
    const chosen = orderCreatedV2(payload(), {
      messageId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
      occurredAt: '2026-11-29T10:00:00+01:00',
      aggregateVersion: 0,
    });
    expect(parseEnvelope(JSON.parse(JSON.stringify(chosen))).ok).toBe(true);
  });

  it('refuse an empty aggregate id, which no consumer would accept', () => {
    // The example schema already requires a uuid; a descriptor whose schema allows "" still must not build one.
    const lenient = {
      ...orderCreatedV2Descriptor,
      validatePayload: (value: unknown) => ({
        ok: true as const,
        value: value as OrderCreatedV2Payload,
      }),
    };
    expect(() => createEnvelope(lenient, { ...payload(), orderId: '' })).toThrow(
      /aggregate id must not be empty/,
    );
  });

  it('v1 has no couponCode: the writer refuses it at run time and the type forbids it', () => {
    const { couponCode: _omit, ...v1 } = payload();
    expect(orderCreatedV1(v1).schemaVersion).toBe(1);
    // @ts-expect-error — couponCode is not declared in v1: closed types stop writers at compile time.
    expect(() => orderCreatedV1({ ...v1, couponCode: 'X' })).toThrow(ValidationError);
  });
});

describe('writer (strict) and reader (tolerant) validators', () => {
  const withExtras = () => ({
    ...payload(),
    extra: 1,
    total: { amountMinor: 2500, currency: 'EUR', note: 'x' },
  });

  it('the writer rejects undeclared properties, at any depth', () => {
    const result = validateOrderCreatedV2Payload(withExtras());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.violations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '/extra', keyword: 'additionalProperties' }),
        expect.objectContaining({ pointer: '/total/note', keyword: 'additionalProperties' }),
      ]),
    );
  });

  it('the reader accepts them', () => {
    expect(readOrderCreatedV2Payload(withExtras()).ok).toBe(true);
  });

  it('an old reader (v1) reads a newer producer’s v2 payload', () => {
    expect(validateOrderCreatedV1Payload(payload()).ok).toBe(false);
    expect(readOrderCreatedV1Payload(payload()).ok).toBe(true);
  });

  it('the reader still enforces required properties, types, enums, formats and bounds', () => {
    const { customerId: _missing, ...rest } = payload();
    const result = readOrderCreatedV2Payload({
      ...rest,
      orderId: 'not-a-uuid',
      channel: 'fax',
      lines: [],
      total: { amountMinor: '1', currency: 'EUR' },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.violations.map((v) => `${v.pointer} ${v.keyword}`).sort()).toEqual([
      '/channel enum',
      '/customerId required',
      '/lines minItems',
      '/orderId format',
      '/total/amountMinor type',
    ]);
  });
});

describe('parseEnvelope', () => {
  it('accepts a valid envelope (object, JSON text or bytes) and narrows it by type and version', () => {
    const json = envelopeJson();
    for (const input of [
      json,
      JSON.stringify(json),
      new TextEncoder().encode(JSON.stringify(json)),
    ]) {
      const result = parseEnvelope(input);
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expectTypeOf(result.envelope).toEqualTypeOf<AnyEnvelope>();
      const envelope = result.envelope;
      if (envelope.eventType === 'order.OrderCreated' && envelope.schemaVersion === 2) {
        expectTypeOf(envelope).toEqualTypeOf<OrderCreatedV2Envelope>();
        expect(envelope.payload.couponCode).toBe('WELCOME10');
        expect(envelope.traceId).toBe('trace-1');
      } else {
        expect.unreachable('narrowing failed');
      }
    }
  });

  it('narrows the payload type in a switch over eventType', () => {
    const amountOf = (envelope: AnyEnvelope): number | undefined => {
      switch (envelope.eventType) {
        case 'order.OrderPaid':
          expectTypeOf(envelope.payload).toEqualTypeOf<OrderPaidV1Payload>();
          return envelope.payload.amount.amountMinor;
        case 'order.OrderCreated':
          return envelope.payload.total.amountMinor;
        default:
          return undefined;
      }
    };
    const result = parseEnvelope(envelopeJson());
    expect(result.ok && amountOf(result.envelope)).toBe(2500);
  });

  it('tolerates unknown payload properties from newer producers', () => {
    const json = envelopeJson();
    const result = parseEnvelope({
      ...json,
      payload: { ...(json.payload as object), addedLater: true },
    });
    expect(result.ok).toBe(true);
  });

  it('lists every envelope and payload violation with its JSON pointer', () => {
    const json = envelopeJson();
    const badPayload = {
      ...(json.payload as OrderCreatedV2Payload),
      lines: [{ sku: 'SKU-001', quantity: 0, unitPrice: { amountMinor: 1, currency: 'EUR' } }],
    };
    const result = parseEnvelope({
      ...json,
      messageId: 'nope',
      occurredAt: 'yesterday',
      traceId: 7,
      payload: badPayload,
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(ValidationError);
    expect(pointers((result.error as ValidationError).violations)).toEqual([
      '/messageId',
      '/occurredAt',
      '/payload/lines/0/quantity',
      '/traceId',
    ]);
  });

  it('reports missing fields and a payload whose aggregate id disagrees', () => {
    const { messageId: _m, occurredAt: _o, ...rest } = envelopeJson();
    const missing = parseEnvelope(rest);
    expect(
      !missing.ok && missing.error instanceof ValidationError && pointers(missing.error.violations),
    ).toEqual(['/messageId', '/occurredAt']);

    const mismatch = parseEnvelope(
      envelopeJson({ aggregateId: 'someone-else', aggregateType: 'Invoice' }),
    );
    expect(
      !mismatch.ok &&
        mismatch.error instanceof ValidationError &&
        mismatch.error.violations.map((v) => `${v.pointer} ${v.keyword}`),
    ).toEqual(['/aggregateType const', '/aggregateId aggregateId']);
  });

  it('distinguishes an unknown event type or version from an invalid message', () => {
    const unknownType = parseEnvelope(envelopeJson({ eventType: 'order.OrderTeleported' }));
    expect(unknownType.ok).toBe(false);
    if (unknownType.ok) return;
    expect(unknownType.error).toBeInstanceOf(UnknownEventError);
    expect(unknownType.error).toMatchObject({
      eventType: 'order.OrderTeleported',
      retryable: false,
    });

    const unknownVersion = parseEnvelope(envelopeJson({ schemaVersion: 3 }));
    expect(!unknownVersion.ok && unknownVersion.error).toBeInstanceOf(UnknownEventError);
    expect(!unknownVersion.ok && unknownVersion.error).toMatchObject({
      eventType: 'order.OrderCreated',
      schemaVersion: 3,
    });
    expect(!unknownVersion.ok && unknownVersion.error.message).toContain('known: 1, 2');
  });

  it('rejects input that is not an envelope at all', () => {
    for (const input of ['{not json', 42, null, [], 'null']) {
      const result = parseEnvelope(input);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error).toBeInstanceOf(ValidationError);
    }
  });

  it('returns only envelope fields, not unknown top-level ones', () => {
    const result = parseEnvelope(envelopeJson({ smuggled: true }));
    expect(result.ok && Object.keys(result.envelope)).not.toContain('smuggled');
  });
});

describe('catalog module', () => {
  it('maps event type and version to envelope types, and registers every descriptor', () => {
    expectTypeOf<EnvelopeMap['order.OrderCreated'][2]>().toEqualTypeOf<OrderCreatedV2Envelope>();
    expectTypeOf<EnvelopeMap['order.OrderCreated'][1 | 2]>().toEqualTypeOf<OrderCreatedEnvelope>();
    expectTypeOf<EventType>().toEqualTypeOf<
      | 'inventory.StockReleased'
      | 'inventory.StockReserved'
      | 'order.OrderCancelled'
      | 'order.OrderCreated'
      | 'order.OrderPaid'
      | 'order.OrderShipped'
    >();
    expect(descriptors.map((d) => `${d.eventType}@${d.schemaVersion}`)).toEqual([
      'inventory.StockReleased@1',
      'inventory.StockReserved@1',
      'order.OrderCancelled@1',
      'order.OrderCreated@1',
      'order.OrderCreated@2',
      'order.OrderPaid@1',
      'order.OrderShipped@1',
    ]);
    expect(orderCreatedV2Descriptor).toMatchObject({
      aggregateIdProperty: 'orderId',
      kafka: { topic: 'order.events' },
      rabbitmq: { exchange: 'order', routingKey: 'order.created' },
    });
  });
});
