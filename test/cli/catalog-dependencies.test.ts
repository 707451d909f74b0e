/**
 * A consumer repository that depends on another repository's catalog (`catalogs` in
 * evgen.config.json): the build generates what it reads (types, validators, envelopes, its own
 * consumers) and nothing for writing the dependency's events (no outbox writers, no publish
 * helpers); its own events still get them.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';
import { consumerRepository as inFolder } from './consumer-repository.js';
import { runCliCaptured } from './capture-output.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-deps-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const consumerRepository = (own: Record<string, unknown> = {}) => inFolder(dir, own);

const inRepo = (repo: string, ...argv: string[]) =>
  runCliCaptured(...argv, '--config', join(repo, 'evgen.config.json'), '--no-cache');

describe('a consumer built from a catalog package', () => {
  it('gets types, validators, envelopes and its consumer, but no writers for events it does not produce', async () => {
    const repo = await consumerRepository({
      'billing/InvoiceSent/event.json': eventJson('billing', 'InvoiceSent'),
      'billing/InvoiceSent/v1.schema.json': payloadSchema(),
    });
    const result = await inRepo(repo, 'build');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const generated = join(repo, 'generated');
    for (const file of ['envelope.ts', 'types.ts', 'validators.js'])
      expect(existsSync(join(generated, 'order/order-paid', file))).toBe(true);
    expect(existsSync(join(generated, 'order/order-paid/outbox.ts'))).toBe(false);
    expect(existsSync(join(generated, 'order/order-shipped/outbox.ts'))).toBe(false);
    // Its own event keeps its writer and publish helpers.
    expect(existsSync(join(generated, 'billing/invoice-sent/outbox.ts'))).toBe(true);
    const kafka = await readFile(join(generated, 'kafka/producers.ts'), 'utf8');
    expect(kafka).toContain('publishInvoiceSentV1');
    expect(kafka).not.toContain('OrderPaid');
    const rabbit = await readFile(join(generated, 'rabbitmq/publishers.ts'), 'utf8');
    expect(rabbit).toContain('publishInvoiceSent');
    expect(rabbit).not.toContain('publishOrderPaid');
    // Its consumer reads the dependency's event; the producer's consumer is not generated.
    const consumer = await readFile(join(generated, 'consumers/billing.ts'), 'utf8');
    expect(consumer).toContain("'order.OrderPaid'");
    expect(existsSync(join(generated, 'consumers/audit.ts'))).toBe(false);
  });

  it('a pure consumer gets no publish helpers at all', async () => {
    const repo = await consumerRepository();
    expect((await inRepo(repo, 'build')).code).toBe(0);
    expect(existsSync(join(repo, 'generated/kafka/producers.ts'))).toBe(false);
    expect(existsSync(join(repo, 'generated/rabbitmq/publishers.ts'))).toBe(false);
    expect(existsSync(join(repo, 'generated/kafka/topics.ts'))).toBe(true);
  });

  it('rebuilds when the installed package changes (the build cache keys on it)', async () => {
    const repo = await consumerRepository();
    const build = () => runCliCaptured('build', '--config', join(repo, 'evgen.config.json'));
    expect((await build()).code).toBe(0);
    await writeFiles(join(repo, 'node_modules/@acme/orders/catalog'), {
      'order/OrderPaid/v2.schema.json': payloadSchema({ amount: { type: 'integer' } }),
    });
    const second = await build();
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain('inputs unchanged');
    expect(await readFile(join(repo, 'generated/consumers/billing.ts'), 'utf8')).toContain(
      'OrderPaidV2',
    );
  });

  it('refuses an own event that clashes with a dependency event', async () => {
    const repo = await consumerRepository({
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid', {
        rabbitmq: { exchange: 'billing', routingKey: 'x' },
      }),
      'order/OrderPaid/v1.schema.json': payloadSchema(),
    });
    const result = await inRepo(repo, 'build');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('duplicate-event-type');
    expect(result.stderr).toContain('node_modules/@acme/orders/catalog/order/OrderPaid/event.json');
    expect(existsSync(join(repo, 'generated'))).toBe(false);
  });

  it('names a catalog package that is not installed, and a subscription to an unknown event', async () => {
    const repo = await consumerRepository();
    await writeFiles(repo, {
      'evgen.config.json': { catalogs: { orders: '@acme/orders', stock: '@acme/stock' } },
    });
    const missing = await inRepo(repo, 'build');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/#\/catalogs\/stock: catalog-not-installed/);
    expect(missing.stderr).toContain('npm install --save-exact @acme/stock');

    await writeFiles(repo, { 'evgen.config.json': { catalogs: { orders: '@acme/orders' } } });
    await writeFiles(join(repo, 'events'), {
      '_consumers/billing.json': { description: 'Bills.', subscribes: ['order.OrderPayed'] },
    });
    const unknown = await inRepo(repo, 'build');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('consumer-unknown-event');
    expect(unknown.stderr).toContain('order.OrderPaid');
  });

  it('refuses a catalog name that is not kebab-case', async () => {
    const repo = await consumerRepository();
    await writeFiles(repo, { 'evgen.config.json': { catalogs: { Orders: '@acme/orders' } } });
    const result = await inRepo(repo, 'build');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"catalogs" maps a kebab-case name');
  });
});
