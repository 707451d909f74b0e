/**
 * `evgen check` in a consumer repository judges an upgraded catalog package by what the consumer
 * reads: its pinned versions unchanged, every newer writer version readable by its pinned reader
 * whatever mode the producer declares, and a change of mode a finding of its own.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventJson, payloadSchema, writeFiles } from '../catalog/temp-catalog.js';
import { runCliCaptured } from './capture-output.js';
import { consumerRepository } from './consumer-repository.js';

let dir: string;
let repo: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-dep-check-'));
  repo = await consumerRepository(dir, {
    'billing/InvoiceSent/event.json': eventJson('billing', 'InvoiceSent'),
    'billing/InvoiceSent/v1.schema.json': payloadSchema(),
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const check = (...argv: string[]) =>
  runCliCaptured('check', '--config', join(repo, 'evgen.config.json'), '--no-cache', ...argv);
const pins = () => join(repo, 'events/_catalogs/orders.lock.json');
/** The producer's next package: files changed in the installed catalog. */
const upgrade = (files: Record<string, unknown>) =>
  writeFiles(join(repo, 'node_modules/@acme/orders/catalog'), files);

describe('evgen check in a consumer repository', () => {
  it('pins what the consumers read, in a lock of its own beside the own events lock', async () => {
    const first = await check('--update-lock');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const pinned = JSON.parse(await readFile(pins(), 'utf8')) as {
      source: string;
      events: Record<string, { compatibility: string; versions: Record<string, string> }>;
    };
    expect(pinned.source).toBe('@acme/orders@1.0.0');
    // Only what billing subscribes to; OrderShipped is not read here.
    expect(Object.keys(pinned.events)).toEqual(['order/OrderPaid']);
    expect(pinned.events['order/OrderPaid']!.compatibility).toBe('FULL_TRANSITIVE');
    const ownLock = JSON.parse(await readFile(join(repo, 'events/evgen.lock.json'), 'utf8')) as {
      events: Record<string, unknown>;
    };
    expect(Object.keys(ownLock.events)).toEqual(['billing/InvoiceSent']);
    expect((await check()).code).toBe(0);
  });

  it('says when a catalog its consumers read is not pinned', async () => {
    const result = await check();
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('catalog orders is not pinned');
  });

  it('passes a compatible upgrade', async () => {
    expect((await check('--update-lock')).code).toBe(0);
    await upgrade({
      'order/OrderPaid/v2.schema.json': payloadSchema({
        amount: { type: 'integer' },
        currency: { type: 'string' },
      }),
    });
    const result = await check();
    expect(result.stdout).toContain('compatible');
    expect(result.code).toBe(0);
  });

  it('fails the upgrade in which the producer set NONE and changed a field type', async () => {
    expect((await check('--update-lock')).code).toBe(0);
    await upgrade({
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid', { compatibility: 'NONE' }),
      'order/OrderPaid/v2.schema.json': payloadSchema({ amount: { type: 'string' } }),
    });
    // The producer's own check passes: NONE allows anything.
    const producer = await runCliCaptured(
      'check',
      '--events',
      join(repo, 'node_modules/@acme/orders/catalog'),
      '--no-cache',
    );
    expect(producer.code).toBe(0);

    const result = await check('--update-lock');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('COMPATIBILITY_MODE_CHANGED');
    expect(result.stdout).toContain('from FULL_TRANSITIVE');
    expect(result.stdout).toMatch(/OrderPaid\/v2\.schema\.json#\/properties\/amount: TYPE_CHANGED/);
    expect(result.stdout).toContain('cannot read v2');
    // Nothing is re-pinned after a failing check.
    expect(result.stderr).toContain('not updated');
    expect(await readFile(pins(), 'utf8')).not.toContain('"NONE"');
  });

  it('fails a mode change alone, and an in-place edit or deletion of a pinned version', async () => {
    expect((await check('--update-lock')).code).toBe(0);
    await upgrade({
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid', { compatibility: 'BACKWARD' }),
    });
    const mode = await check();
    expect(mode.code).toBe(1);
    expect(mode.stdout).toContain('COMPATIBILITY_MODE_CHANGED');

    await upgrade({
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid'),
      'order/OrderPaid/v1.schema.json': payloadSchema({ amount: { type: 'number' } }),
    });
    const edited = await check();
    expect(edited.code).toBe(1);
    expect(edited.stdout).toContain('RELEASED_VERSION_CHANGED');
    expect(edited.stdout).toContain('v1 of order.OrderPaid has changed in catalog orders');

    await rm(join(repo, 'node_modules/@acme/orders/catalog/order/OrderPaid'), { recursive: true });
    await writeFiles(join(repo, 'events'), {
      '_consumers/billing.json': { description: 'Bills.', subscribes: ['order.OrderShipped'] },
    });
    await writeFiles(join(repo, 'events/_catalogs'), {
      'orders.lock.json': {
        ...(JSON.parse(await readFile(pins(), 'utf8')) as object),
      },
    });
    // Billing no longer reads OrderPaid: its pin does not fail the check.
    expect((await check()).code).toBe(0);
  });

  it('re-pins after the consumer accepts a breaking upgrade by deleting its pins', async () => {
    expect((await check('--update-lock')).code).toBe(0);
    await upgrade({
      'order/OrderPaid/event.json': eventJson('order', 'OrderPaid', { compatibility: 'NONE' }),
      'order/OrderPaid/v2.schema.json': payloadSchema({ amount: { type: 'string' } }),
    });
    expect((await check()).code).toBe(1);
    await rm(pins());
    expect((await check('--update-lock')).code).toBe(0);
    expect(existsSync(pins())).toBe(true);
    expect(await readFile(pins(), 'utf8')).toContain('"NONE"');
    expect((await check()).code).toBe(0);
  });

  it('reports pins that are not a pin file as bad input', async () => {
    await writeFiles(join(repo, 'events/_catalogs'), { 'orders.lock.json': { pinVersion: 7 } });
    const result = await check();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad-pins');
  });
});
