/**
 * Writer and reader validators accept only finite numbers: `Infinity`/`NaN` would pass a writer
 * and go on the wire as `null` (poison every reader rejects), and `1e400` parses to Infinity.
 */
import { runTarget } from '../support/run-target.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { PayloadValidator } from 'evgen/runtime';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { validatorsTarget } from '../../src/codegen/targets/validators.js';
import { parseEnvelope, validateOrderCreatedV2Payload } from '../../generated/index.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const EVENT_JSON = {
  description: 'Numbers without bounds.',
  aggregate: 'Meter',
  aggregateId: 'meterId',
  kafka: { topic: 'meter.events' },
  rabbitmq: { exchange: 'meter', routingKey: 'meter.read' },
};

function schema(dialect: 'draft-07' | '2020-12') {
  return {
    ...(dialect === '2020-12' ? { $schema: 'https://json-schema.org/draft/2020-12/schema' } : {}),
    type: 'object',
    properties: {
      meterId: { type: 'string' },
      reading: { type: 'number' },
      count: { type: 'integer' },
      either: { type: ['number', 'string'] },
    },
    required: ['meterId', 'reading'],
  };
}

describe('validators accept only finite numbers', () => {
  const scratch = join(REPO, 'tmp', `finite-numbers-${randomBytes(4).toString('hex')}`);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const dialect of ['draft-07', '2020-12'] as const) {
    it(`refuses Infinity, -Infinity and NaN in number and integer fields, writer and reader (${dialect})`, async () => {
      const root = join(scratch, dialect);
      const events = join(root, 'events', 'meter', 'MeterRead');
      mkdirSync(events, { recursive: true });
      writeFileSync(join(events, 'event.json'), JSON.stringify(EVENT_JSON));
      writeFileSync(join(events, 'v1.schema.json'), JSON.stringify(schema(dialect)));
      const catalog = await loadCatalog(join(root, 'events'));
      const files = await runTarget(validatorsTarget, { catalog, runtimeImport: 'evgen/runtime' });
      for (const file of files) {
        mkdirSync(dirname(join(root, 'out', file.path)), { recursive: true });
        writeFileSync(join(root, 'out', file.path), file.content);
      }
      const mod = (await import(
        join(root, 'out', 'meter', 'meter-read', 'validators.js')
      )) as Record<string, PayloadValidator<unknown>>;
      const write = mod.validateMeterReadV1Payload!;
      const read = mod.readMeterReadV1Payload!;
      for (const check of [write, read]) {
        expect(check({ meterId: 'm', reading: 1.5, count: 2, either: 3 }).ok).toBe(true);
        for (const bad of [Infinity, -Infinity, NaN]) {
          expect(check({ meterId: 'm', reading: bad }).ok).toBe(false);
          expect(check({ meterId: 'm', reading: 1, count: bad }).ok).toBe(false);
          expect(check({ meterId: 'm', reading: 1, either: bad }).ok).toBe(false);
        }
        // JSON text with 1e400 parses to Infinity.
        expect(check(JSON.parse('{"meterId":"m","reading":1e400}')).ok).toBe(false);
        expect(check(JSON.parse('{"meterId":"m","reading":1,"count":1e400}')).ok).toBe(false);
      }
    });
  }

  it('the example writer refuses Infinity and the reader refuses 1e400 as an integer', () => {
    const payload = {
      orderId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
      customerId: '0190a6a4-1f2b-7c3d-8e4f-000000000001',
      placedAt: '2026-11-29T10:00:00Z',
      channel: 'web',
      lines: [{ sku: 'SKU-001', quantity: 2, unitPrice: { amountMinor: 1250, currency: 'EUR' } }],
      total: { amountMinor: 2500, currency: 'EUR' },
      shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    };
    expect(validateOrderCreatedV2Payload(payload).ok).toBe(true);
    const infinite = validateOrderCreatedV2Payload({
      ...payload,
      total: { amountMinor: Infinity, currency: 'EUR' },
    });
    expect(infinite.ok).toBe(false);
    const text = JSON.stringify({
      messageId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e01',
      eventType: 'order.OrderCreated',
      schemaVersion: 2,
      aggregateType: 'Order',
      aggregateId: payload.orderId,
      occurredAt: '2026-11-29T10:00:00Z',
      payload: { ...payload, total: { amountMinor: 1, currency: 'EUR' } },
    }).replace('"amountMinor":1,', '"amountMinor":1e400,');
    const result = parseEnvelope(text);
    expect(result.ok).toBe(false);
    // The decoder refuses the literal before any validator sees an Infinity.
    if (!result.ok) expect(result.error.message).toContain('body contains the number 1e400');
  });

  it('parseEnvelope refuses numbers it would round or read as Infinity, in any notation and property', () => {
    const envelope = {
      messageId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e01',
      eventType: 'order.OrderCreated',
      schemaVersion: 2,
      aggregateType: 'Order',
      aggregateId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
      occurredAt: '2026-11-29T10:00:00Z',
      payload: {
        orderId: '0190a6a4-1f2b-7c3d-8e4f-5a6b7c8d9e0f',
        customerId: '0190a6a4-1f2b-7c3d-8e4f-000000000001',
        placedAt: '2026-11-29T10:00:00Z',
        channel: 'web',
        lines: [{ sku: 'SKU-001', quantity: 2, unitPrice: { amountMinor: 1250, currency: 'EUR' } }],
        total: { amountMinor: 2500, currency: 'EUR' },
        shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
        // Unknown to the schema: the tolerant reader lets it through untyped.
        note: 7,
      },
    };
    const text = JSON.stringify(envelope);
    expect(parseEnvelope(text).ok).toBe(true);
    for (const [from, to] of [
      ['"amountMinor":2500', '"amountMinor":12345678901234567e0'],
      ['"amountMinor":2500', '"amountMinor":9007199254740993.0'],
      ['"note":7', '"note":1e400'],
      ['"note":7', '"note":9007199254740993.0'],
    ] as const) {
      const result = parseEnvelope(text.replace(from, to));
      expect(result.ok, to).toBe(false);
      if (!result.ok) expect(result.error.message).toContain(to.split(':')[1]);
    }
  });
});
