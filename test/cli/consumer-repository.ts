/**
 * A consumer repository in a scratch folder for CLI tests: `<dir>/billing` with its own
 * `_consumers/billing.json` (subscribing to order.OrderPaid) and the producer's catalog installed
 * as the package `@acme/orders` (`node_modules/@acme/orders/catalog`), named `orders` in its
 * evgen.config.json.
 */
import { join } from 'node:path';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';

export const producerEvents = {
  'order/OrderPaid/event.json': eventJson('order', 'OrderPaid'),
  'order/OrderPaid/v1.schema.json': payloadSchema({ amount: { type: 'integer' } }),
  'order/OrderShipped/event.json': eventJson('order', 'OrderShipped'),
  'order/OrderShipped/v1.schema.json': payloadSchema(),
  // The producer's own consumers are not the consumer repository's business.
  '_consumers/audit.json': { description: 'Audits.', subscribes: ['order.OrderShipped'] },
};

/** A consumer repository at `<dir>/billing` reading the package at node_modules/@acme/orders. */
export async function consumerRepository(
  dir: string,
  ownEvents: Record<string, unknown> = {},
): Promise<string> {
  const pkg = join(dir, 'billing', 'node_modules', '@acme', 'orders');
  await writeFiles(pkg, {
    'package.json': { name: '@acme/orders', version: '1.0.0', evgen: { catalog: 'catalog' } },
  });
  await writeFiles(join(pkg, 'catalog'), producerEvents);
  await writeFiles(join(dir, 'billing'), {
    'evgen.config.json': { catalogs: { orders: '@acme/orders' } },
  });
  await writeFiles(join(dir, 'billing', 'events'), {
    '_consumers/billing.json': { description: 'Bills.', subscribes: ['order.OrderPaid'] },
    ...ownEvents,
  });
  return join(dir, 'billing');
}
