/**
 * The whole consumer path on the example catalog, with every target's real output: build →
 * scaffold → the user fills in the v2 handler and the v1→v2 upcaster → it type-checks → a v1
 * and a v2 OrderCreated each have one business effect through the generated consumer (PGlite).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { generate } from '../../src/codegen/generate.js';
import { allTargets } from '../../src/codegen/targets/index.js';
import { planScaffold } from '../../src/scaffold/index.js';
import { migrateInbox, type Database, type Envelope, type InboxConsumer } from 'evgen/runtime';
import { openPglite, type Backend } from './support/backends.js';
import { typecheck } from '../support/typecheck.js';

const base = fileURLToPath(
  new URL(`./fixtures/${randomBytes(4).toString('hex')}/out/`, import.meta.url),
);
let pglite: Backend;

beforeAll(async () => {
  const catalog = await loadCatalog(fileURLToPath(new URL('../../events', import.meta.url)));
  const write = (path: string, content: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  const targetNames = ['types', 'validators', 'envelopes', 'consumers'];
  for (const file of await generate(catalog, allTargets, { targetNames }))
    write(join(base, 'generated', file.path), file.content);
  const plan = await planScaffold(catalog, {
    handlersDir: 'handlers',
    generatedDir: 'generated',
    runtimeImport: 'evgen/runtime',
    readFile: () => undefined,
  });
  for (const change of plan.changes) write(join(base, 'handlers', change.path), change.content);
  pglite = await openPglite();
  await migrateInbox(pglite.db, { schema: pglite.schema });
  // The user's handler writes unqualified table names: PGlite is one session, so search_path sticks.
  await pglite.db.query(`SET search_path TO "${pglite.schema}"`);
  await pglite.db.query(
    `CREATE TABLE "${pglite.schema}".reservation (order_id text, sku text, quantity int, coupon text)`,
  );
});
afterAll(async () => {
  rmSync(join(base, '..'), { recursive: true, force: true });
  await pglite?.close();
});

/** What a user writes into the scaffolded files: replace the TODO bodies. */
function implement(path: string, stubStart: string, body: string): void {
  const file = join(base, 'handlers', path);
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(stubStart);
  expect(start).toBeGreaterThan(0);
  writeFileSync(file, text.slice(0, start) + body);
}

describe('example catalog end to end', () => {
  it('scaffolded, implemented handlers type-check and handle v1 (upcast) and v2 once each', async () => {
    implement(
      'inventory-service/order-created.ts',
      '/** Handles order.OrderCreated version 2. */',
      `export const handleOrderCreatedV2: InventoryServiceOrderCreatedV2Handler = async (envelope, ctx) => {
  for (const line of envelope.payload.lines) {
    await ctx.tx.query('INSERT INTO reservation (order_id, sku, quantity, coupon) VALUES ($1, $2, $3, $4)', [
      envelope.payload.orderId, line.sku, line.quantity, envelope.payload.couponCode ?? null,
    ]);
  }
};
`,
    );
    implement(
      'inventory-service/upcasters/order-created.ts',
      '/** Converts order.OrderCreated payloads from v1 to v2. */',
      `export const orderCreatedV1ToV2: InventoryServiceOrderCreatedV1ToV2Upcaster = (payload) => ({ ...payload });
`,
    );
    const main = join(base, 'main.ts');
    writeFileSync(
      main,
      `import type { Database } from 'evgen/runtime';
import { createInventoryServiceConsumer } from './generated/consumers/inventory-service.js';
import { handlers, upcasters } from './handlers/inventory-service/index.js';
export function inventoryService(db: Database, schema: string) {
  return createInventoryServiceConsumer({ db, handlers, upcasters, inbox: { schema } });
}
`,
    );
    expect(typecheck([main, join(base, 'handlers/shipping-service/index.ts')])).toEqual([]);

    const { inventoryService } = (await import(pathToFileURL(main).href)) as {
      inventoryService: (db: Database, schema: string) => InboxConsumer;
    };
    const envelopes = (await import(
      pathToFileURL(join(base, 'generated/order/order-created/envelope.ts')).href
    )) as {
      orderCreatedV1: (payload: object) => Envelope;
      orderCreatedV2: (payload: object) => Envelope;
    };
    const consumer = inventoryService(pglite.db, pglite.schema);
    expect(consumer.subscribes).toEqual(['order.OrderCancelled', 'order.OrderCreated']);
    const payload = (orderId: string) => ({
      orderId,
      customerId: '0b6a4c64-1d5e-4b8f-9a4f-3a1c2f6f7e01',
      placedAt: '2026-11-29T10:00:00Z',
      channel: 'web',
      lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: { amountMinor: 500, currency: 'EUR' } }],
      total: { amountMinor: 1000, currency: 'EUR' },
      shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    });
    const v1 = envelopes.orderCreatedV1(payload('7d7c1a38-5b0e-4a53-9c39-1d7b6b2b8a01'));
    const v2 = envelopes.orderCreatedV2({
      ...payload('7d7c1a38-5b0e-4a53-9c39-1d7b6b2b8a02'),
      couponCode: 'WINTER',
    });
    expect(await consumer.handle(JSON.stringify(v1))).toBe('handled');
    expect(await consumer.handle(JSON.stringify(v2))).toBe('handled');
    expect(await consumer.handle(JSON.stringify(v1))).toBe('duplicate');
    // The scaffolded, unimplemented OrderCancelled handler fails non-retryably and leaves no inbox row.
    const cancelled = await import(
      pathToFileURL(join(base, 'generated/order/order-cancelled/envelope.ts')).href
    );
    const cancel = (cancelled as { orderCancelledV1: (p: object) => Envelope }).orderCancelledV1({
      orderId: '7d7c1a38-5b0e-4a53-9c39-1d7b6b2b8a01',
      cancelledAt: '2026-11-29T11:00:00Z',
      reason: 'customer_request',
    });
    await expect(consumer.handle(cancel)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining('not implemented'),
    });

    const rows = await pglite.db.query(
      `SELECT order_id, sku, quantity, coupon FROM "${pglite.schema}".reservation ORDER BY order_id`,
    );
    expect(rows.rows).toEqual([
      { order_id: '7d7c1a38-5b0e-4a53-9c39-1d7b6b2b8a01', sku: 'SKU-1', quantity: 2, coupon: null },
      {
        order_id: '7d7c1a38-5b0e-4a53-9c39-1d7b6b2b8a02',
        sku: 'SKU-1',
        quantity: 2,
        coupon: 'WINTER',
      },
    ]);
  });
});
