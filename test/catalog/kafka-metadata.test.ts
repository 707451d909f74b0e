/** event.json's Kafka topic settings and `ordering`: loaded as declared, bad values refused precisely. */
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError, type CatalogProblem } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { eventJson, payloadSchema, tempCatalog, type TempCatalog } from './temp-catalog.js';

const created: TempCatalog[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((catalog) => catalog.cleanup()));
});

async function load(events: Record<string, Record<string, unknown>>) {
  const files: Record<string, unknown> = {};
  for (const [name, extra] of Object.entries(events)) {
    files[`shop/${name}/event.json`] = eventJson('shop', name, extra);
    files[`shop/${name}/v1.schema.json`] = payloadSchema();
  }
  const catalog = await tempCatalog(files);
  created.push(catalog);
  return loadCatalog(catalog.events);
}

async function problems(events: Record<string, Record<string, unknown>>): Promise<string[][]> {
  try {
    await load(events);
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

describe('event.json Kafka settings and ordering', () => {
  it('loads partitions, retention, cleanup policy and ordering as declared; absent stays absent', async () => {
    const catalog = await load({
      OrderPlaced: {
        kafka: { topic: 'shop.events', partitions: 12, retentionMs: -1, cleanupPolicy: 'compact' },
        ordering: 'strict',
      },
      OrderPaid: {},
    });
    const [paid, placed] = catalog.events;
    expect(placed!.kafka).toEqual({
      topic: 'shop.events',
      partitions: 12,
      retentionMs: -1,
      cleanupPolicy: 'compact',
    });
    expect(placed!.ordering).toBe('strict');
    expect(paid!.kafka).toEqual({ topic: 'shop.events' });
    expect(paid!.ordering).toBeUndefined();
  });

  it('refuses bad values with the pointer and a hint saying what is allowed', async () => {
    const found = await problems({
      OrderPlaced: {
        kafka: {
          topic: 'shop.events',
          partitions: 0,
          retentionMs: 1.5,
          cleanupPolicy: 'forever',
          parts: 3,
        },
        ordering: 'total',
      },
    });
    expect(found.map(([code, file, pointer]) => [code, file, pointer])).toEqual([
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/kafka/cleanupPolicy'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/kafka/partitions'],
      ['unknown-key', 'shop/OrderPlaced/event.json', '/kafka/parts'],
      ['invalid-event-json', 'shop/OrderPlaced/event.json', '/kafka/retentionMs'],
      ['unknown-ordering', 'shop/OrderPlaced/event.json', '/ordering'],
    ]);
    const hints = Object.fromEntries(found.map(([, , pointer, , hint]) => [pointer, hint]));
    expect(hints['/kafka/parts']).toMatch(/partitions/);
    expect(hints['/kafka/partitions']).toMatch(/from 1 to 10000 \(default 6\)/);
    expect(hints['/kafka/retentionMs']).toMatch(/-1 for forever/);
    expect(hints['/kafka/cleanupPolicy']).toMatch(/delete, compact, compact,delete/);
    expect(hints['/ordering']).toMatch(/relaxed, strict/);
  });

  it('refuses two events declaring different settings for one topic', async () => {
    const found = await problems({
      OrderPaid: { kafka: { topic: 'shop.events', partitions: 3 } },
      OrderPlaced: { kafka: { topic: 'shop.events', partitions: 6, retentionMs: 1000 } },
      OrderShipped: { kafka: { topic: 'shop.events', retentionMs: 1000 } },
    });
    expect(found).toEqual([
      [
        'conflicting-kafka-topic',
        'shop/OrderPlaced/event.json',
        '/kafka/partitions',
        'topic "shop.events" is declared with partitions 6 here and 3 in shop/OrderPaid/event.json',
        'declare partitions once for the topic, or give both events the same value',
      ],
    ]);
  });
});
