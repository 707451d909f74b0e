import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import {
  buildAsyncApiDocument,
  renderAsyncApiDocument,
} from '../../src/asyncapi/asyncapi-document.js';
import { runAsyncApi } from '../../src/cli/commands/asyncapi.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../../src/cli/exit-codes.js';
import { useCliFixture } from '../cli/cli-fixture.js';
import {
  eventJson,
  oneEvent,
  payloadSchema,
  tempCatalog,
  type TempCatalog,
} from '../catalog/temp-catalog.js';

/** A one-event catalog whose payload has `properties` besides orderId. */
const tempCatalogFor = (properties: Record<string, unknown>): Promise<TempCatalog> =>
  tempCatalog(oneEvent({}, payloadSchema(properties)));

const repo = new URL('../../', import.meta.url).pathname;

/** The message payload as the parser returns it: a multi-format schema around the envelope schema. */
interface EnvelopeJson {
  schema: {
    properties: {
      schemaVersion: { const: number };
      payload: { properties: Record<string, unknown> };
    };
  };
}

/** Parser diagnostics that are errors (0) or warnings (1); information and hints are not ours. */
async function problems(document: string) {
  const { diagnostics } = await new Parser().parse(document);
  return diagnostics
    .filter((d) => (d.severity as number) <= 1)
    .map((d) => `${d.code}: ${d.message} at ${d.path.join('/')}`);
}

describe('AsyncAPI export', () => {
  for (const folder of [
    'events',
    'test/golden/common-ref/events',
    'test/golden/dialect-2020/events',
    'test/golden/injection/events',
    'test/golden/pulsar-only/events',
  ]) {
    it(`parses without errors or warnings: ${folder}`, async () => {
      const catalog = await loadCatalog(join(repo, folder));
      expect(await problems(renderAsyncApiDocument(catalog))).toEqual([]);
    });
  }

  it('has a channel per Kafka topic and per RabbitMQ route, a message per version, consumer operations', async () => {
    const catalog = await loadCatalog(join(repo, 'events'));
    const parsed = await new Parser().parse(renderAsyncApiDocument(catalog));
    const document = parsed.document!;
    const addresses = document
      .channels()
      .all()
      .map((channel) => channel.address())
      .sort();
    const topics = [...new Set(catalog.events.map((e) => e.kafka!.topic))];
    const routingKeys = catalog.events.map((e) => e.rabbitmq!.routingKey);
    expect(addresses).toEqual([...topics, ...routingKeys].sort());

    const versions = catalog.events.flatMap((e) =>
      e.versions.map((v) => `${e.eventType} v${v.version}`),
    );
    const messages = document
      .components()
      .messages()
      .all()
      .map(
        (m) =>
          `${m.name()} v${m.payload()!.json<EnvelopeJson>().schema.properties.schemaVersion.const}`,
      );
    expect(messages.sort()).toEqual(versions.sort());

    // Each declared consumer receives each subscribed event on both transports.
    const receives = document
      .operations()
      .filterByReceive()
      .map((operation) => operation.id())
      .sort();
    const expected = catalog.consumers.flatMap((consumer) =>
      consumer.subscribes.flatMap((type) =>
        ['kafka', 'rabbitmq'].map((transport) => `${consumer.name}.receive.${type}.${transport}`),
      ),
    );
    expect(receives).toEqual(expected.sort());
  });

  it('has a channel per Pulsar topic with its pulsar binding, send and receive operations', async () => {
    const catalog = await loadCatalog(join(repo, 'test/golden/pulsar-only/events'));
    const document = buildAsyncApiDocument(catalog) as {
      channels: Record<string, { address: string; bindings: unknown }>;
      operations: Record<string, { action: string; channel: { $ref: string } }>;
    };
    expect(document.channels).toEqual({
      'pulsar.public.default.payment.events': expect.objectContaining({
        address: 'persistent://public/default/payment.events',
        bindings: {
          pulsar: { namespace: 'default', persistence: 'persistent', bindingVersion: '0.1.0' },
        },
      }),
      'pulsar.public.payments.payment.refunds': expect.objectContaining({
        address: 'persistent://public/payments/payment.refunds',
        bindings: {
          pulsar: { namespace: 'payments', persistence: 'persistent', bindingVersion: '0.1.0' },
        },
      }),
    });
    expect(
      Object.entries(document.operations).map(([id, op]) => [id, op.action, op.channel.$ref]),
    ).toEqual([
      [
        'ledger-service.receive.payment.PaymentCaptured.pulsar',
        'receive',
        '#/channels/pulsar.public.default.payment.events',
      ],
      [
        'ledger-service.receive.payment.PaymentRefunded.pulsar',
        'receive',
        '#/channels/pulsar.public.payments.payment.refunds',
      ],
      [
        'publish.pulsar.public.default.payment.events',
        'send',
        '#/channels/pulsar.public.default.payment.events',
      ],
      [
        'publish.pulsar.public.payments.payment.refunds',
        'send',
        '#/channels/pulsar.public.payments.payment.refunds',
      ],
    ]);
  });

  it('never copies a $ref found inside data (default, const, enum, examples, x-*) as a live reference', async () => {
    const cli = await tempCatalogFor({
      note: {
        type: 'object',
        default: { $ref: 'http://127.0.0.1:9/default.json' },
        examples: [{ $ref: 'https://attacker.invalid/examples.json' }],
        enum: [{ $ref: 'file:///etc/passwd' }],
        const: { nested: [{ $ref: 'http://127.0.0.1:9/const.json' }] },
        'x-origin': { $ref: 'http://127.0.0.1:9/extension.json' },
        description: 'kept',
      },
    });
    try {
      const document = renderAsyncApiDocument(await loadCatalog(cli.events));
      const refs = [...document.matchAll(/"\$ref": "([^"]*)"/g)].map((match) => match[1]!);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) expect(ref).toMatch(/^#\//);
      expect(document).toContain('"description": "kept"');
      expect(await problems(document)).toEqual([]);
    } finally {
      await cli.cleanup();
    }
  });

  it('inlines the payload schema with its shared definitions resolvable inside the document', async () => {
    const catalog = await loadCatalog(join(repo, 'events'));
    const parsed = await new Parser().parse(renderAsyncApiDocument(catalog));
    const created = parsed
      .document!.components()
      .messages()
      .all()
      .find((m) => m.id() === 'order.OrderCreated.v1')!;
    // The parser dereferenced `#/definitions/_common.money` to the money schema itself.
    const envelope = created.payload()!.json<EnvelopeJson>().schema;
    expect(envelope.properties.payload.properties.total).toMatchObject({
      title: 'Money',
      properties: { amountMinor: expect.anything(), currency: expect.anything() },
    });
  });

  it('is deterministic', async () => {
    const catalog = await loadCatalog(join(repo, 'events'));
    expect(renderAsyncApiDocument(catalog)).toBe(renderAsyncApiDocument(catalog));
    expect(buildAsyncApiDocument(catalog, { title: 'Shop', version: '2.1.0' }).info).toMatchObject({
      title: 'Shop',
      version: '2.1.0',
    });
  });
});

describe('evgen asyncapi', () => {
  const fixture = useCliFixture(() =>
    oneEvent({
      'shop/OrderShipped/event.json': eventJson('shop', 'OrderShipped'),
      'shop/OrderShipped/v1.schema.json': payloadSchema({ carrier: { type: 'string' } }),
    }),
  );

  it('prints the document to stdout', async () => {
    expect(await runAsyncApi({ events: fixture.catalog.events }, fixture.catalog.dir)).toBe(
      EXIT_OK,
    );
    const document = JSON.parse(fixture.output.stdout()) as { asyncapi: string; channels: object };
    expect(document.asyncapi).toBe('3.0.0');
    expect(Object.keys(document.channels)).toEqual([
      'kafka.shop.events',
      'rabbitmq.shop.shop.OrderPlaced',
      'rabbitmq.shop.shop.OrderShipped',
    ]);
  });

  it('writes --out, with the given title and version', async () => {
    const code = await runAsyncApi(
      { events: fixture.catalog.events, out: 'asyncapi.json', title: 'Shop', docVersion: '3.2.1' },
      fixture.catalog.dir,
    );
    expect(code).toBe(EXIT_OK);
    const text = await readFile(join(fixture.catalog.dir, 'asyncapi.json'), 'utf8');
    expect(JSON.parse(text).info).toMatchObject({ title: 'Shop', version: '3.2.1' });
    expect(await problems(text)).toEqual([]);
    expect(fixture.output.stdout()).toBe('');
  });

  it('refuses an invalid catalog with exit 2 and writes nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'evgen-asyncapi-'));
    try {
      const code = await runAsyncApi(
        { events: join(fixture.catalog.events, 'missing'), out: join(dir, 'asyncapi.json') },
        fixture.catalog.dir,
      );
      expect(code).toBe(EXIT_BAD_INPUT);
      expect(fixture.output.stderr()).toMatch(/hint:/);
      await expect(stat(join(dir, 'asyncapi.json'))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says which file it could not write (exit 2)', async () => {
    const code = await runAsyncApi(
      { events: fixture.catalog.events, out: 'no/such/folder/asyncapi.json' },
      fixture.catalog.dir,
    );
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(fixture.output.stderr()).toContain('no/such/folder/asyncapi.json');
  });
});
