/**
 * The Kafka wire format is chosen per catalog and per event, explicitly: evgen.config.json's
 * `wireFormat` for the repository's own events, a catalog package's `"evgen": {"wireFormat": …}`
 * for a dependency's, and event.json's `kafka.wireFormat` over either. The generated routes mark
 * the framed events. Every bad value is refused with its file and JSON pointer. (What the runtime
 * does with the marks, on the real broker and registry: test/registry/wire-format.test.ts.)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { KafkaWireFormat } from '../../src/catalog/model.js';
import { eventJson, payloadSchema, writeFiles } from './temp-catalog.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { consumerRepository } from '../cli/consumer-repository.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-wire-format-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Framed (`confluent`) or not, per event type, as the loaded catalog says. */
async function formats(wireFormat?: KafkaWireFormat): Promise<Record<string, string>> {
  await writeFiles(join(dir, 'events'), {
    'shop/OrderPlaced/event.json': eventJson('shop', 'OrderPlaced'),
    'shop/OrderPlaced/v1.schema.json': payloadSchema(),
    'shop/OrderPaid/event.json': eventJson('shop', 'OrderPaid', {
      kafka: { topic: 'shop.events', wireFormat: 'json' },
    }),
    'shop/OrderPaid/v1.schema.json': payloadSchema(),
    'shop/OrderShipped/event.json': eventJson('shop', 'OrderShipped', {
      kafka: { topic: 'shop.events', wireFormat: 'confluent' },
    }),
    'shop/OrderShipped/v1.schema.json': payloadSchema(),
  });
  const catalog = await loadCatalog(
    join(dir, 'events'),
    wireFormat === undefined ? {} : { wireFormat },
  );
  return Object.fromEntries(
    catalog.events.map((event) => [event.eventType, event.kafka?.wireFormat ?? 'json']),
  );
}

describe('choosing the Kafka wire format', () => {
  it("an event's own kafka.wireFormat wins over the catalog's default, which is json unless set", async () => {
    expect(await formats()).toEqual({
      'shop.OrderPaid': 'json',
      'shop.OrderPlaced': 'json',
      'shop.OrderShipped': 'confluent',
    });
    expect(await formats('confluent')).toEqual({
      'shop.OrderPaid': 'json',
      'shop.OrderPlaced': 'confluent',
      'shop.OrderShipped': 'confluent',
    });
  });

  it("evgen build marks the framed routes: the config's wireFormat, each event's own over it", async () => {
    await writeFiles(dir, {
      'evgen.config.json': {
        wireFormat: 'confluent',
        targets: ['types', 'validators', 'envelopes', 'kafka'],
      },
    });
    await formats();
    const build = await runCliCaptured(
      'build',
      '--config',
      join(dir, 'evgen.config.json'),
      '--no-cache',
    );
    expect(build.stderr).toBe('');
    const producers = await readFile(join(dir, 'generated/kafka/producers.ts'), 'utf8');
    expect(producers).toContain(
      "'shop.OrderPlaced': { topic: 'shop.events', wireFormat: 'confluent' }",
    );
    expect(producers).toContain("'shop.OrderPaid': { topic: 'shop.events' }");
    expect(producers).toContain(
      "'shop.OrderShipped': { topic: 'shop.events', wireFormat: 'confluent' }",
    );
  });

  it('refuses an unknown value with its file and pointer: event.json, evgen.config.json', async () => {
    await writeFiles(join(dir, 'events'), {
      'shop/OrderPlaced/event.json': eventJson('shop', 'OrderPlaced', {
        kafka: { topic: 'shop.events', wireFormat: 'avro' },
      }),
      'shop/OrderPlaced/v1.schema.json': payloadSchema(),
    });
    const bad = await runCliCaptured(
      'build',
      '--events',
      join(dir, 'events'),
      '--out',
      join(dir, 'out'),
      '--no-cache',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'shop/OrderPlaced/event.json#/kafka/wireFormat: unknown-wire-format: unknown Kafka wire format "avro"',
    );
    expect(bad.stderr).toContain('use one of json, confluent');

    await writeFiles(dir, { 'evgen.config.json': { wireFormat: 'framed' } });
    const config = await runCliCaptured(
      'build',
      '--config',
      join(dir, 'evgen.config.json'),
      '--no-cache',
    );
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('evgen.config.json#/wireFormat: invalid-config');
    expect(config.stderr).toContain('"wireFormat" is how this repository\'s events are written');
  });

  it("a dependency's wire format comes from its package.json; a bad value names the package's file and key", async () => {
    const repo = await consumerRepository(dir);
    const pkg = join(repo, 'node_modules/@acme/orders');
    const evgen = (value: unknown) =>
      writeFiles(pkg, {
        'package.json': {
          name: '@acme/orders',
          version: '1.0.0',
          evgen: { catalog: 'catalog', wireFormat: value },
        },
      });
    await evgen('confluent');
    const { loadConfig } = await import('../../src/cli/config.js');
    const { loadProjectCatalog } = await import('../../src/cli/project-catalog.js');
    const config = await loadConfig({ config: join(repo, 'evgen.config.json') });
    const { catalog } = await loadProjectCatalog(config);
    expect(
      Object.fromEntries(catalog.events.map((e) => [e.eventType, e.kafka?.wireFormat ?? 'json'])),
    ).toEqual({ 'order.OrderPaid': 'confluent', 'order.OrderShipped': 'confluent' });

    await evgen('protobuf');
    const build = await runCliCaptured(
      'build',
      '--config',
      join(repo, 'evgen.config.json'),
      '--no-cache',
    );
    expect(build.code).toBe(2);
    expect(build.stderr).toMatch(
      /node_modules\/@acme\/orders\/package\.json#\/evgen\/wireFormat: invalid-catalog-package: "protobuf" is not a Kafka wire format/,
    );
    const pack = await runCliCaptured('catalog', 'check-package', pkg);
    expect(pack.code).toBe(2);
    expect(pack.stderr).toContain('#/evgen/wireFormat: invalid-catalog-package');
  });
});
