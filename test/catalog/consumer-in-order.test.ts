/**
 * A consumer's declared `inOrder` checked against what it will receive: `every-version` over
 * RabbitMQ with only some of an aggregate's event types is refused at build time (their versions
 * never arrive, so each later version would wait as a gap); `allow-gaps`, full coverage of the
 * aggregate, or events on Kafka only pass.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { seeDocs } from '../../src/catalog/doc-sections.js';
import { runCli } from '../../src/cli/main.js';
import { captureOutput } from '../cli/capture-output.js';
import { eventJson, payloadSchema, tempCatalog, type TempCatalog } from './temp-catalog.js';

const created: TempCatalog[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((catalog) => catalog.cleanup()));
});

/** Order events Created/Paid/Shipped (+ Customer's Registered) and one consumer. */
async function catalogWith(
  consumer: Record<string, unknown>,
  transport: 'both' | 'kafka' = 'both',
): Promise<TempCatalog> {
  const files: Record<string, unknown> = {};
  for (const name of ['OrderCreated', 'OrderPaid', 'OrderShipped']) {
    const meta = eventJson('order', name);
    if (transport === 'kafka') delete meta.rabbitmq;
    files[`order/${name}/event.json`] = meta;
    files[`order/${name}/v1.schema.json`] = payloadSchema();
  }
  files['customer/CustomerRegistered/event.json'] = eventJson('customer', 'CustomerRegistered', {
    aggregate: 'Customer',
  });
  files['customer/CustomerRegistered/v1.schema.json'] = payloadSchema();
  files['_consumers/shipping-service.json'] = { description: 'Ships.', ...consumer };
  const catalog = await tempCatalog(files);
  created.push(catalog);
  return catalog;
}

async function problemsOf(catalog: TempCatalog) {
  try {
    await loadCatalog(catalog.events);
  } catch (error) {
    if (error instanceof CatalogError)
      return error.problems.map((p) => ({
        code: p.code,
        file: p.file.replace(/^.*\/events\//, ''),
        pointer: p.pointer,
        message: p.message,
        hint: p.hint,
      }));
    throw error;
  }
  return [];
}

describe('consumer "inOrder" against its subscriptions', () => {
  it('refuses every-version over RabbitMQ for a subset of an aggregate, naming what it misses', async () => {
    const catalog = await catalogWith({
      subscribes: ['order.OrderPaid', 'customer.CustomerRegistered'],
      inOrder: 'every-version',
    });
    expect(await problemsOf(catalog)).toEqual([
      {
        code: 'consumer-in-order-gaps',
        file: '_consumers/shipping-service.json',
        pointer: '/inOrder',
        message:
          'applies Order events in every-version order over RabbitMQ but does not subscribe to "order.OrderCreated", "order.OrderShipped": their versions never arrive, so each later version of the Order would wait as a gap',
        hint: `set "inOrder": "allow-gaps" (newer versions apply, older ones are skipped), subscribe to every Order event, or publish them on Kafka only (no "rabbitmq" block), where skipped records still advance the version (${seeDocs('ordering')})`,
      },
    ]);
  });

  it('the build stops with exit 2 and the problem on stderr, writing nothing', async () => {
    const catalog = await catalogWith({
      subscribes: ['order.OrderPaid'],
      inOrder: 'every-version',
    });
    const output = captureOutput();
    let code: number;
    try {
      code = await runCli(['build', '--events', catalog.events, '--out', `${catalog.dir}/out`]);
    } finally {
      output.restore();
    }
    expect(code).toBe(2);
    expect(output.stderr()).toContain(
      '_consumers/shipping-service.json#/inOrder: consumer-in-order-gaps: applies Order events in every-version order over RabbitMQ',
    );
    expect(output.stdout()).toBe('');
    expect(existsSync(`${catalog.dir}/out`)).toBe(false);
  });

  it.each([
    [
      'allow-gaps with a subset',
      { subscribes: ['order.OrderPaid'], inOrder: 'allow-gaps' },
      'both',
    ],
    [
      'every-version with every Order event',
      {
        subscribes: ['order.OrderCreated', 'order.OrderPaid', 'order.OrderShipped'],
        inOrder: 'every-version',
      },
      'both',
    ],
    [
      'every-version with a subset on Kafka only',
      { subscribes: ['order.OrderPaid'], inOrder: 'every-version' },
      'kafka',
    ],
    ['no inOrder declared', { subscribes: ['order.OrderPaid'] }, 'both'],
  ] as const)('accepts %s', async (_, consumer, transport) => {
    const catalog = await catalogWith(consumer, transport);
    expect(await problemsOf(catalog)).toEqual([]);
    const loaded = await loadCatalog(catalog.events);
    expect(loaded.consumers[0]!.inOrder).toBe((consumer as { inOrder?: string }).inOrder);
  });

  it('refuses an unknown mode with the modes and the documentation section', async () => {
    const catalog = await catalogWith({ subscribes: ['order.OrderPaid'], inOrder: 'strict' });
    expect(await problemsOf(catalog)).toEqual([
      {
        code: 'invalid-consumer',
        file: '_consumers/shipping-service.json',
        pointer: '/inOrder',
        message: 'must be equal to one of the allowed values',
        hint: `use one of every-version, allow-gaps (${seeDocs('ordering')})`,
      },
    ]);
  });
});
