/**
 * event.json's optional `pulsar` block: loaded as declared (absent keys stay absent, the full topic
 * name defaults to public/default), bad values and reserved names refused with the pointer and a
 * hint, conflicting partition counts for one topic refused, a Pulsar-only catalog loads and
 * builds, a consumer of a Pulsar-only and a Kafka-only event is refused, and `evgen new
 * --transports pulsar` writes the block.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError, type CatalogProblem } from '../../src/catalog/catalog-error.js';
import { pulsarTopicName } from '../../src/catalog/event-transports.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { EXIT_OK } from '../../src/cli/exit-codes.js';
import { runCli } from '../../src/cli/main.js';
import { captureOutput } from '../cli/capture-output.js';
import { eventJson, payloadSchema, tempCatalog, type TempCatalog } from './temp-catalog.js';

const created: TempCatalog[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((catalog) => catalog.cleanup()));
});

/** `shop/<Name>` events; each event.json is `eventJson` without its Kafka/RabbitMQ blocks plus `extra`. */
async function catalogOf(
  events: Record<string, Record<string, unknown>>,
  consumers: Record<string, string[]> = {},
): Promise<TempCatalog> {
  const files: Record<string, unknown> = {};
  for (const [name, extra] of Object.entries(events)) {
    const { kafka: _k, rabbitmq: _r, ...rest } = eventJson('shop', name);
    files[`shop/${name}/event.json`] = { ...rest, ...extra };
    files[`shop/${name}/v1.schema.json`] = payloadSchema();
  }
  for (const [name, subscribes] of Object.entries(consumers))
    files[`_consumers/${name}.json`] = { description: `${name}.`, subscribes };
  const catalog = await tempCatalog(files);
  created.push(catalog);
  return catalog;
}

async function problems(
  events: Record<string, Record<string, unknown>>,
  consumers: Record<string, string[]> = {},
): Promise<string[][]> {
  const catalog = await catalogOf(events, consumers);
  try {
    await loadCatalog(catalog.events);
  } catch (error) {
    if (error instanceof CatalogError)
      return error.problems.map((p: CatalogProblem) => [
        p.code,
        p.file.replace(/^.*\/events\//, ''),
        p.pointer,
        p.message.replace(/ \S*\/events\//, ' '),
        p.hint,
      ]);
    throw error;
  }
  throw new Error('expected the catalog to be refused');
}

describe('event.json pulsar block', () => {
  it('loads tenant, namespace, topic and partitions as declared; absent keys stay absent', async () => {
    const catalog = await catalogOf({
      OrderPlaced: {
        pulsar: { tenant: 'acme', namespace: 'orders', topic: 'shop.events', partitions: 4 },
      },
      OrderPaid: { pulsar: { topic: 'shop.events' } },
    });
    const [paid, placed] = (await loadCatalog(catalog.events)).events;
    expect(placed!.pulsar).toEqual({
      tenant: 'acme',
      namespace: 'orders',
      topic: 'shop.events',
      partitions: 4,
    });
    expect(paid!.pulsar).toEqual({ topic: 'shop.events' });
    expect(paid!.kafka).toBeUndefined();
    expect(paid!.rabbitmq).toBeUndefined();
    expect(pulsarTopicName(placed!.pulsar!)).toBe('persistent://acme/orders/shop.events');
    expect(pulsarTopicName(paid!.pulsar!)).toBe('persistent://public/default/shop.events');
  });

  it('refuses bad values with the pointer and a hint saying what is allowed', async () => {
    const found = await problems({
      OrderPlaced: {
        pulsar: { tenant: 'a/b', namespace: '', topic: 'shop events', partitions: 0, partition: 3 },
      },
      OrderPaid: { pulsar: { namespace: 'orders' } },
    });
    expect(found.map(([code, file, pointer]) => [code, file, pointer])).toEqual([
      ['missing-key', 'shop/OrderPaid/event.json', '/pulsar'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/pulsar/namespace'],
      ['unknown-key', 'shop/OrderPlaced/event.json', '/pulsar/partition'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/pulsar/partitions'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/pulsar/tenant'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/pulsar/topic'],
    ]);
    const hints = Object.fromEntries(found.map(([, , pointer, , hint]) => [pointer, hint]));
    expect(hints['/pulsar']).toMatch(/add "topic"/);
    expect(hints['/pulsar/partition']).toMatch(/did you mean "partitions"/i);
    expect(hints['/pulsar/partitions']).toMatch(
      /from 1 to 10000; leave it out for a non-partitioned topic/,
    );
    expect(hints['/pulsar/tenant']).toMatch(/default "public"/);
    expect(hints['/pulsar/topic']).toMatch(/letters, digits/);
  });

  it('refuses the names Pulsar reserves: "__" system topics and "-partition-<n>" names', async () => {
    const found = await problems({
      OrderPaid: { pulsar: { topic: '__change_events' } },
      OrderPlaced: { pulsar: { topic: 'shop.events-partition-0' } },
    });
    expect(found.map(([code, , pointer, message]) => [code, pointer, message])).toEqual([
      [
        'reserved-name',
        '/pulsar/topic',
        '"__change_events" is reserved by Pulsar (names starting with "__" are its system topics, such as __change_events)',
      ],
      [
        'reserved-name',
        '/pulsar/topic',
        '"shop.events-partition-0" is reserved by Pulsar (a name ending in "-partition-<n>" is one partition of a partitioned topic)',
      ],
    ]);
  });

  it('refuses two events declaring different partition counts for one topic (same tenant and namespace)', async () => {
    const found = await problems({
      OrderPaid: { pulsar: { topic: 'shop.events', partitions: 3 } },
      OrderPlaced: { pulsar: { tenant: 'public', topic: 'shop.events', partitions: 6 } },
      // Another namespace: another topic, no conflict.
      OrderShipped: { pulsar: { namespace: 'other', topic: 'shop.events', partitions: 9 } },
    });
    expect(found).toEqual([
      [
        'conflicting-pulsar-topic',
        'shop/OrderPlaced/event.json',
        '/pulsar/partitions',
        'topic "persistent://public/default/shop.events" is declared with partitions 6 here and 3 in shop/OrderPaid/event.json',
        'declare partitions once for the topic, or give both events the same value',
      ],
    ]);
  });

  it('refuses a consumer of a Pulsar-only and a Kafka-only event: no broker carries both', async () => {
    const found = await problems(
      {
        OrderPaid: { pulsar: { topic: 'shop.events' } },
        OrderPlaced: { kafka: { topic: 'shop.events' } },
      },
      { billing: ['shop.OrderPaid', 'shop.OrderPlaced'] },
    );
    expect(found.map(([code, , , message]) => [code, message])).toEqual([
      [
        'consumer-transports-disjoint',
        'subscribes to "shop.OrderPlaced" (only on Kafka) and "shop.OrderPaid" (only on Pulsar): no broker carries both',
      ],
    ]);
  });

  it('a Pulsar-only catalog builds', async () => {
    const catalog = await catalogOf({
      OrderPaid: { pulsar: { topic: 'shop.events' } },
      OrderPlaced: { pulsar: { topic: 'shop.events', partitions: 2 } },
    });
    const output = captureOutput();
    try {
      const code = await runCli([
        'build',
        '--events',
        catalog.events,
        '--out',
        join(catalog.dir, 'generated'),
        '--no-cache',
      ]);
      expect(code, output.stderr()).toBe(EXIT_OK);
    } finally {
      output.restore();
    }
  });

  it('evgen new --transports pulsar writes a pulsar block, and the result loads', async () => {
    const catalog = await catalogOf({ OrderPaid: { pulsar: { topic: 'shop.events' } } });
    const output = captureOutput();
    try {
      expect(await runCli(['new', 'loyalty/PointsAwarded', '--events', catalog.events])).toBe(
        EXIT_OK,
      );
      expect(
        await runCli([
          'new',
          'loyalty/PointsRedeemed',
          '--transports',
          'pulsar,kafka',
          '--events',
          catalog.events,
        ]),
      ).toBe(EXIT_OK);
    } finally {
      output.restore();
    }
    const read = async (name: string) =>
      JSON.parse(
        await readFile(join(catalog.events, 'loyalty', name, 'event.json'), 'utf8'),
      ) as Record<string, unknown>;
    // The catalog uses Pulsar only: that is the block a new event gets.
    const awarded = await read('PointsAwarded');
    expect(awarded.pulsar).toEqual({ topic: 'loyalty.events' });
    expect(awarded).not.toHaveProperty('kafka');
    const redeemed = await read('PointsRedeemed');
    expect(redeemed.pulsar).toEqual({ topic: 'loyalty.events' });
    expect(redeemed.kafka).toEqual({ topic: 'loyalty.events' });
    const loaded = await loadCatalog(catalog.events);
    expect(loaded.events.find((e) => e.name === 'PointsAwarded')!.pulsar).toEqual({
      topic: 'loyalty.events',
    });
  });
});
