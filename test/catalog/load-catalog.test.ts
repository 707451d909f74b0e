import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError, type CatalogProblem } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { mapSchema } from '../../src/schema/walk.js';
import {
  DRAFT_2020,
  eventJson,
  oneEvent,
  payloadSchema,
  tempCatalog,
  type CatalogFiles,
  type TempCatalog,
} from './temp-catalog.js';

const exampleEvents = fileURLToPath(new URL('../../events', import.meta.url));

// Every catalog a test creates (some load several), removed after the test.
const created: TempCatalog[] = [];
let current: TempCatalog | undefined;
afterEach(async () => {
  await Promise.all(created.splice(0).map((catalog) => catalog.cleanup()));
  current = undefined;
});

async function temp(files: CatalogFiles): Promise<TempCatalog> {
  current = await tempCatalog(files);
  created.push(current);
  return current;
}

async function load(files: CatalogFiles) {
  return loadCatalog((await temp(files)).events);
}

async function problems(files: CatalogFiles): Promise<CatalogProblem[]> {
  try {
    await load(files);
  } catch (error) {
    if (error instanceof CatalogError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a CatalogError');
}

describe('loadCatalog on the example catalog', () => {
  it('loads every event, version and consumer, sorted, with defaults applied', async () => {
    const catalog = await loadCatalog(exampleEvents);
    expect(
      catalog.events.map(
        (event) => `${event.eventType}@${event.versions.map((v) => v.version).join(',')}`,
      ),
    ).toEqual([
      'inventory.StockReleased@1',
      'inventory.StockReserved@1',
      'order.OrderCancelled@1',
      'order.OrderCreated@1,2',
      'order.OrderPaid@1',
      'order.OrderShipped@1',
    ]);
    const created = catalog.events.find((event) => event.name === 'OrderCreated')!;
    expect(created).toMatchObject({
      domain: 'order',
      dir: 'order/OrderCreated',
      policy: 'evgen',
      compatibility: 'FULL_TRANSITIVE',
      aggregateId: 'orderId',
    });
    expect(created.versions[1]!.file).toBe('order/OrderCreated/v2.schema.json');
    expect(catalog.consumers.map((consumer) => [consumer.name, consumer.subscribes])).toEqual([
      ['inventory-service', ['order.OrderCancelled', 'order.OrderCreated']],
      ['shipping-service', ['inventory.StockReserved', 'order.OrderPaid']],
    ]);
  });

  it('bundles shared files into definitions and rewrites the references', async () => {
    const catalog = await loadCatalog(exampleEvents);
    const v1 = catalog.events.find((event) => event.name === 'OrderCreated')!.versions[0]!;
    const bundled = v1.bundled as Record<string, any>;
    expect(bundled.properties.total).toEqual({ $ref: '#/definitions/_common.money' });
    expect(bundled.properties.lines.items.properties.unitPrice).toEqual({
      $ref: '#/definitions/_common.money',
    });
    expect(Object.keys(bundled.definitions)).toEqual(['_common.address', '_common.money']);
    expect(bundled.definitions['_common.money'].title).toBe('Money');
    expect(bundled.definitions['_common.money'].$id).toBeUndefined();
    expect(bundled.definitions['_common.money'].$schema).toBeUndefined();
    // The schema as written is kept untouched.
    expect((v1.schema as Record<string, any>).properties.total).toEqual({
      $ref: '../../_common/money.schema.json',
    });
    expect(JSON.stringify(bundled)).not.toContain('.schema.json');
  });

  it('is deterministic: two loads give equal catalogs', async () => {
    const first = await loadCatalog(exampleEvents);
    const second = await loadCatalog(exampleEvents);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });
});

describe('loadCatalog rules', () => {
  it('applies eventType, policy and compatibility from event.json', async () => {
    const catalog = await load(
      oneEvent({
        'shop/OrderPlaced/event.json': eventJson('shop', 'OrderPlaced', {
          eventType: 'shop.placed',
          policy: 'confluent',
          compatibility: 'BACKWARD',
        }),
      }),
    );
    expect(catalog.events[0]).toMatchObject({
      eventType: 'shop.placed',
      policy: 'confluent',
      compatibility: 'BACKWARD',
    });
  });

  it('bundles 2020-12 schemas into $defs, following refs between shared files and their local pointers', async () => {
    const catalog = await load(
      oneEvent(
        {
          '_common/ids.schema.json': {
            $defs: { uuid: { type: 'string', format: 'uuid' } },
            $ref: 'customer.schema.json#/$defs/name',
          },
          '_common/customer.schema.json': {
            $schema: DRAFT_2020,
            $defs: { name: { type: 'string', minLength: 1 } },
          },
        },
        {
          $schema: DRAFT_2020,
          type: 'object',
          properties: {
            orderId: { $ref: '../../_common/ids.schema.json#/$defs/uuid' },
            customer: { $ref: '../../_common/ids.schema.json' },
          },
          required: ['orderId'],
        },
      ),
    );
    const bundled = catalog.events[0]!.versions[0]!.bundled as Record<string, any>;
    expect(bundled.properties.orderId).toEqual({ $ref: '#/$defs/_common.ids/$defs/uuid' });
    expect(bundled.properties.customer).toEqual({ $ref: '#/$defs/_common.ids' });
    expect(bundled.$defs['_common.ids'].$ref).toBe('#/$defs/_common.customer/$defs/name');
    expect(Object.keys(bundled.$defs)).toEqual(['_common.customer', '_common.ids']);
  });

  it('accepts recursion inside one schema through definitions (a tree)', async () => {
    const catalog = await load(
      oneEvent(
        {},
        payloadSchema(
          { root: { $ref: '#/definitions/node' } },
          {
            definitions: {
              node: {
                type: 'object',
                properties: { children: { type: 'array', items: { $ref: '#/definitions/node' } } },
              },
            },
          },
        ),
      ),
    );
    expect(catalog.events).toHaveLength(1);
  });

  it('accepts an aggregate id whose string type comes from a shared file', async () => {
    const catalog = await load(
      oneEvent(
        { '_common/id.schema.json': { type: 'string', format: 'uuid' } },
        payloadSchema({ orderId: { $ref: '../../_common/id.schema.json' } }),
      ),
    );
    expect(catalog.events[0]!.aggregateId).toBe('orderId');
  });

  it('reports every problem of a catalog at once, each with a code, file, pointer and hint', async () => {
    const found = await problems({
      ...oneEvent(),
      'shop/OrderPaid/event.json': eventJson('shop', 'OrderPaid', {
        compatibility: 'SOMETIMES',
        extra: true,
      }),
      'shop/OrderPaid/v1.schema.json': payloadSchema({}, { required: [] }),
      'shop/OrderPaid/v2.schema.json': '{ nope',
    });
    expect(
      found.map((problem) => [
        problem.code,
        problem.file.replace(/^.*\/events\//, ''),
        problem.pointer,
      ]),
    ).toEqual([
      ['unknown-compatibility-mode', 'shop/OrderPaid/event.json', '/compatibility'],
      ['unknown-key', 'shop/OrderPaid/event.json', '/extra'],
      ['aggregate-id-optional', 'shop/OrderPaid/v1.schema.json', '/required'],
      ['invalid-json', 'shop/OrderPaid/v2.schema.json', ''],
    ]);
    for (const problem of found) expect(problem.hint.length).toBeGreaterThan(0);
  });

  it('refuses a $ref chain a → b → a with nothing else', async () => {
    const found = await problems(
      oneEvent(
        {},
        payloadSchema(
          { total: { $ref: '#/definitions/a' } },
          {
            definitions: {
              a: { $ref: '#/definitions/b' },
              b: { $ref: '#/definitions/a', description: 'only a ref' },
            },
          },
        ),
      ),
    );
    expect(found.map((problem) => [problem.code, problem.pointer])).toEqual([
      ['ref-self', '/definitions/a/$ref'],
      ['ref-self', '/definitions/b/$ref'],
    ]);
  });

  it('refuses a file that refers back to the event schema (a cycle through files)', async () => {
    const found = await problems(
      oneEvent(
        { '_common/back.schema.json': { $ref: '../shop/OrderPlaced/v1.schema.json' } },
        payloadSchema({ back: { $ref: '../../_common/back.schema.json' } }),
      ),
    );
    expect(found.map((problem) => problem.code)).toEqual(['ref-cycle']);
    expect(found[0]!.message).toContain(
      'shop/OrderPlaced/v1.schema.json → _common/back.schema.json → shop/OrderPlaced/v1.schema.json',
    );
  });

  it('refuses unresolvable pointers, anchors and dialect mixes', async () => {
    const found = await problems(
      oneEvent(
        { '_common/new.schema.json': { $schema: DRAFT_2020, type: 'string' } },
        payloadSchema({
          a: { $ref: '#/definitions/missing' },
          b: { $ref: '#anchor' },
          c: { $ref: '../../_common/new.schema.json' },
        }),
      ),
    );
    expect(found.map((problem) => [problem.code, problem.pointer])).toEqual([
      ['ref-unresolved', '/properties/a/$ref'],
      ['ref-unsupported-fragment', '/properties/b/$ref'],
      ['ref-dialect-mismatch', '/properties/c/$ref'],
    ]);
  });

  it('reports schemas ajv cannot compile (invalid regular expression)', async () => {
    const found = await problems(
      oneEvent({}, payloadSchema({ code: { type: 'string', pattern: '([a-z' } })),
    );
    expect(found.map((problem) => problem.code)).toEqual(['invalid-schema']);
    // …and says where: the pattern's pointer and the regular expression's complaint.
    expect(found[0]).toMatchObject({
      pointer: '/properties/code/pattern',
      message: expect.stringContaining('([a-z'),
    });
    const keys = await problems(
      oneEvent(
        {},
        payloadSchema({
          tags: { type: 'object', patternProperties: { '*x': { type: 'string' } } },
        }),
      ),
    );
    expect(keys).toEqual([
      expect.objectContaining({
        code: 'invalid-schema',
        pointer: '/properties/tags/patternProperties/*x',
      }),
    ]);
  });

  it('does not mistake data for references ($ref inside enum/const/default)', async () => {
    const catalog = await load(
      oneEvent(
        {},
        payloadSchema({
          kind: {
            type: 'object',
            const: { $ref: 'https://example.com' },
            default: { $ref: '/etc/x' },
          },
        }),
      ),
    );
    expect(catalog.events).toHaveLength(1);
  });

  it('refuses $id below the root and unknown files in an event folder', async () => {
    const found = await problems(
      oneEvent(
        { 'shop/OrderPlaced/v1.json': {} },
        payloadSchema({ a: { $id: 'a.json', type: 'string' } }),
      ),
    );
    expect(found.map((problem) => problem.code)).toEqual([
      'unexpected-file',
      'nested-id-unsupported',
    ]);
  });

  it('ignores other underscore folders and hidden files', async () => {
    const catalog = await load(
      oneEvent({ '_drafts/whatever.json': '{ not json', '.DS_Store': 'x', 'shop/.hidden': 'x' }),
    );
    expect(catalog.events).toHaveLength(1);
  });

  it('refuses a property named __proto__ with its pointer (not a confusing ajv message), and keeps it a key while walking', async () => {
    // Written as JSON text: a JS object literal with a __proto__ key would set the prototype instead.
    const schema =
      '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "required": ["orderId"], "additionalProperties": false,' +
      ' "properties": {"orderId": {"type": "string"}, "__proto__": {"type": "integer"}, "constructor": {"type": "string"}}}';
    expect(await problems(oneEvent({}, schema as unknown as Record<string, unknown>))).toEqual([
      expect.objectContaining({ code: 'reserved-property-name', pointer: '/properties/__proto__' }),
    ]);
    const mapped = mapSchema(JSON.parse(schema), (node) => node, { copyData: true }) as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(mapped.properties)).toEqual(['orderId', '__proto__', 'constructor']);
    expect(Object.getPrototypeOf(mapped.properties)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(mapped.properties, '__proto__')?.value).toEqual({
      type: 'integer',
    });
  });

  it('reports a missing events folder', async () => {
    await expect(loadCatalog('/nonexistent/evgen/events')).rejects.toMatchObject({
      problems: [{ code: 'catalog-missing' }],
    });
  });

  it('reports collisions between generated module folders (ABTest vs AbTest)', async () => {
    const found = await problems({
      'shop/ABTest/event.json': eventJson('shop', 'ABTest'),
      'shop/ABTest/v1.schema.json': payloadSchema(),
      'shop/AbTest/event.json': eventJson('shop', 'AbTest'),
      'shop/AbTest/v1.schema.json': payloadSchema(),
    });
    expect(found.map((problem) => problem.code)).toEqual(['name-collision']);
  });
});

describe('loadCatalog and symbolic links', () => {
  it('refuses a $ref that leaves the events folder through a symbolic link', async () => {
    const { mkdir, symlink, writeFile } = await import('node:fs/promises');
    const path = await import('node:path');
    current = await temp(
      oneEvent({}, payloadSchema({ secret: { $ref: '../../_common/outside/secret.schema.json' } })),
    );
    await mkdir(path.join(current.dir, 'outside'));
    await writeFile(path.join(current.dir, 'outside/secret.schema.json'), '{"type":"string"}');
    await mkdir(path.join(current.events, '_common'));
    await symlink(path.join(current.dir, 'outside'), path.join(current.events, '_common/outside'));
    await expect(loadCatalog(current.events)).rejects.toMatchObject({
      problems: [{ code: 'ref-escapes-catalog', pointer: '/properties/secret/$ref' }],
    });
  });
});

describe('loadCatalog keyword checks', () => {
  it('accepts x- annotations and json-schema-to-typescript extensions, refuses typos', async () => {
    const catalog = await load(
      oneEvent(
        {},
        payloadSchema({ note: { type: 'string', 'x-owner': 'team-a', tsType: 'string' } }),
      ),
    );
    expect(catalog.events).toHaveLength(1);
    const found = await problems(
      oneEvent({}, payloadSchema({ note: { type: 'string', maxLenght: 3 } })),
    );
    expect(found.map((problem) => [problem.code, problem.pointer, problem.hint])).toEqual([
      [
        'unknown-keyword',
        '/properties/note/maxLenght',
        'did you mean "maxLength"? (custom annotations must start with "x-")',
      ],
    ]);
  });
});

describe('loadCatalog consumers', () => {
  it('does not add a consumer error for an event that is itself broken', async () => {
    const found = await problems({
      ...oneEvent({ 'shop/OrderPlaced/v3.schema.json': payloadSchema() }),
      '_consumers/billing.json': { description: 'Bills.', subscribes: ['shop.OrderPlaced'] },
    });
    expect(found.map((problem) => problem.code)).toEqual(['version-gap']);
  });

  it('refuses unknown keys and empty subscriptions in consumer files', async () => {
    const found = await problems({
      ...oneEvent(),
      '_consumers/billing.json': { description: 'Bills.', subscribes: [], subscribe: ['x'] },
    });
    expect(found.map((problem) => [problem.code, problem.pointer])).toEqual([
      ['unknown-key', '/subscribe'],
      ['invalid-consumer', '/subscribes'],
    ]);
  });
});

describe('loadCatalog aggregateId through composition', () => {
  it('finds the aggregate id through a root $ref to a shared base and through allOf', async () => {
    const base = {
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    };
    const viaRef = await load(
      oneEvent(
        { '_common/base.schema.json': base },
        {
          $schema: 'http://json-schema.org/draft-07/schema#',
          $ref: '../../_common/base.schema.json',
        },
      ),
    );
    expect(viaRef.events).toHaveLength(1);
    await current!.cleanup();
    const viaAllOf = await load(
      oneEvent(
        { '_common/base.schema.json': base },
        {
          $schema: 'http://json-schema.org/draft-07/schema#',
          allOf: [
            { $ref: '../../_common/base.schema.json' },
            { properties: { note: { type: 'string' } } },
          ],
        },
      ),
    );
    expect(viaAllOf.events).toHaveLength(1);
    await current!.cleanup();
    const optional = await problems(
      oneEvent(
        { '_common/base.schema.json': { ...base, required: [] } },
        {
          $schema: 'http://json-schema.org/draft-07/schema#',
          allOf: [{ $ref: '../../_common/base.schema.json' }],
        },
      ),
    );
    expect(optional.map((problem) => problem.code)).toEqual(['aggregate-id-optional']);
  });
});
