/**
 * Realistic synthetic event catalogs for benchmarks and scale tests: every event has 2–3
 * versions of ~15 properties with nested objects, arrays of objects, enums, formats, bounds,
 * patterns and `$ref`s to shared `_common` schemas; later versions only add optional
 * properties (compatible evolution). Deterministic: the same options give the same bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SyntheticCatalogOptions {
  /** Number of events, spread over domains of at most 25 events each. */
  readonly events: number;
  /** Seed of the deterministic variation between events (default 1). */
  readonly seed?: number;
  /**
   * Payloads of one required id plus one optional property per later version instead of the
   * realistic ~15: for tests where only the number of events matters (cheap to generate).
   */
  readonly minimal?: boolean;
}

/** The `minimal` payload schema: `id`, and `addedInV2`… for later versions. */
export function minimalSchema(index: number, version: number): Json {
  const properties: Json = { id: { type: 'string' } };
  for (let later = 2; later <= version; later++)
    properties[`addedInV${later}`] = { type: 'integer' };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `Minimal${index}`,
    type: 'object',
    properties,
    required: ['id'],
    additionalProperties: false,
  };
}

/** A small deterministic PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DOMAINS = ['billing', 'catalog', 'customer', 'delivery', 'inventory', 'order', 'payment'];
const NOUNS = ['Account', 'Basket', 'Claim', 'Invoice', 'Parcel', 'Quote', 'Refund', 'Ticket'];
const VERBS = ['Opened', 'Updated', 'Approved', 'Rejected', 'Closed', 'Moved', 'Archived'];

type Json = Record<string, unknown>;

const COMMON: Record<string, Json> = {
  'money.schema.json': {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Money',
    description: 'An amount in minor units of an ISO-4217 currency.',
    type: 'object',
    properties: {
      amountMinor: { type: 'integer', minimum: 0 },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    },
    required: ['amountMinor', 'currency'],
    additionalProperties: false,
  },
  'address.schema.json': {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Address',
    type: 'object',
    properties: {
      line1: { type: 'string', minLength: 1, maxLength: 200 },
      line2: { type: 'string', maxLength: 200 },
      city: { type: 'string', minLength: 1 },
      postalCode: { type: 'string', minLength: 1, maxLength: 16 },
      country: { type: 'string', pattern: '^[A-Z]{2}$' },
    },
    required: ['line1', 'city', 'postalCode', 'country'],
    additionalProperties: false,
  },
};

/** The event names of a catalog of `count` events: `{ domain, name }`, unique, sorted by index. */
export function syntheticEventNames(count: number): { domain: string; name: string }[] {
  const names: { domain: string; name: string }[] = [];
  for (let index = 0; index < count; index++) {
    const domain = `${DOMAINS[index % DOMAINS.length]}${Math.floor(index / (DOMAINS.length * 25)) || ''}`;
    const within = Math.floor(index / DOMAINS.length);
    const name = `${NOUNS[within % NOUNS.length]}${VERBS[Math.floor(within / NOUNS.length) % VERBS.length]}${index}`;
    names.push({ domain, name });
  }
  return names;
}

/** Payload schema `version` (1-based) of event number `index`. */
export function syntheticSchema(index: number, version: number, seed = 1): Json {
  const random = seededRandom(seed * 100_003 + index);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const statuses = ['draft', 'open', 'pending', 'approved', 'rejected', 'closed', 'archived'];
  const status = statuses.slice(0, 3 + Math.floor(random() * 4));
  const properties: Json = {
    id: { type: 'string', format: 'uuid' },
    createdAt: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: status },
    reference: { type: 'string', pattern: `^[A-Z]{${2 + (index % 3)}}-[0-9]{4,12}$` },
    email: { type: 'string', format: 'email', maxLength: 254 },
    website: { type: 'string', format: 'uri' },
    quantity: { type: 'integer', minimum: 0, maximum: 1000 + index },
    ratio: { type: 'number', minimum: 0, maximum: 1 },
    active: { type: 'boolean' },
    total: { $ref: '../../_common/money.schema.json' },
    tags: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20 },
    lines: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string', pattern: '^[A-Z0-9-]{3,32}$' },
          quantity: { type: 'integer', minimum: 1 },
          price: { $ref: '../../_common/money.schema.json' },
          kind: {
            type: 'string',
            enum: pick([
              ['physical', 'digital'],
              ['a', 'b', 'c'],
            ]),
          },
        },
        required: ['sku', 'quantity', 'price'],
        additionalProperties: false,
      },
    },
    contact: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 120 },
        phone: { type: 'string', pattern: '^\\+?[0-9 ]{6,20}$' },
        address: { $ref: '../../_common/address.schema.json' },
      },
      required: ['name'],
      additionalProperties: false,
    },
    note: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }] },
    dueDate: { type: 'string', format: 'date' },
  };
  const required = ['id', 'createdAt', 'status', 'reference', 'total', 'lines'];
  if (version >= 2) {
    properties[`channel${index % 5}`] = { type: 'string', enum: ['web', 'mobile', 'store'] };
    properties['metadata'] = {
      type: 'object',
      properties: { source: { type: 'string' }, version: { type: 'integer', minimum: 1 } },
      additionalProperties: false,
    };
  }
  if (version >= 3) properties['priority'] = { type: 'integer', minimum: 0, maximum: 9 };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `Synthetic${index}`,
    description: `Synthetic event ${index}, version ${version}.`,
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  };
}

/** Number of versions of event number `index`: 2 or 3. */
export function syntheticVersionCount(index: number): number {
  return 2 + (index % 2);
}

/** Writes a synthetic catalog into `dir` (which becomes the events folder) and returns its event names. */
export function writeSyntheticCatalog(
  dir: string,
  options: SyntheticCatalogOptions,
): { domain: string; name: string }[] {
  const names = syntheticEventNames(options.events);
  mkdirSync(join(dir, '_common'), { recursive: true });
  for (const [file, schema] of Object.entries(COMMON))
    writeFileSync(join(dir, '_common', file), `${JSON.stringify(schema, null, 2)}\n`);
  names.forEach(({ domain, name }, index) => {
    const eventDir = join(dir, domain, name);
    mkdirSync(eventDir, { recursive: true });
    const kebab = name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
    writeFileSync(
      join(eventDir, 'event.json'),
      `${JSON.stringify(
        {
          description: `Synthetic event ${index}.`,
          aggregate: 'Thing',
          aggregateId: 'id',
          kafka: { topic: `${domain}.events` },
          rabbitmq: { exchange: domain, routingKey: `${domain}.${kebab}` },
        },
        null,
        2,
      )}\n`,
    );
    for (let version = 1; version <= syntheticVersionCount(index); version++) {
      writeFileSync(
        join(eventDir, `v${version}.schema.json`),
        `${JSON.stringify(
          options.minimal === true
            ? minimalSchema(index, version)
            : syntheticSchema(index, version, options.seed ?? 1),
          null,
          2,
        )}\n`,
      );
    }
  });
  if (names.length > 0) {
    mkdirSync(join(dir, '_consumers'), { recursive: true });
    writeFileSync(
      join(dir, '_consumers', 'synthetic-service.json'),
      `${JSON.stringify(
        {
          description: 'Subscribes to every synthetic event.',
          subscribes: names.map(({ domain, name }) => `${domain}.${name}`),
        },
        null,
        2,
      )}\n`,
    );
  }
  return names;
}
