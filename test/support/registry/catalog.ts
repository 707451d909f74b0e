/**
 * Small catalogs for the registry tests, written into scratch folders: one domain of the test's
 * own (so its subjects are its own), a draft-07 event with a `_common` reference and two
 * versions, and events in other dialects and modes where a test needs them.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
export const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

export type Files = Record<string, unknown>;

/** The events of a catalog in `domain`: path under events/ → JSON value. */
export function placedCatalog(domain: string): Files {
  const money = {
    $schema: DRAFT_07,
    type: 'object',
    properties: { amount: { type: 'integer' }, currency: { type: 'string', minLength: 3 } },
    required: ['amount', 'currency'],
  };
  const v1 = {
    $schema: DRAFT_07,
    title: 'Placed',
    type: 'object',
    properties: {
      orderId: { type: 'string' },
      total: { $ref: '../../_common/money.schema.json' },
    },
    required: ['orderId', 'total'],
    additionalProperties: false,
  };
  const v2 = {
    ...v1,
    properties: { ...v1.properties, note: { type: 'string' } },
  };
  return {
    '_common/money.schema.json': money,
    [`${domain}/Placed/event.json`]: {
      description: 'An order was placed.',
      aggregate: 'Order',
      aggregateId: 'orderId',
      compatibility: 'BACKWARD_TRANSITIVE',
      kafka: { topic: `${domain}.events` },
    },
    [`${domain}/Placed/v1.schema.json`]: v1,
    [`${domain}/Placed/v2.schema.json`]: v2,
    [`${domain}/Shipped/event.json`]: {
      description: 'An order left the warehouse.',
      aggregate: 'Order',
      aggregateId: 'orderId',
      compatibility: 'BACKWARD',
      kafka: { topic: `${domain}.events`, partitions: 3 },
      rabbitmq: { exchange: domain, routingKey: `${domain}.shipped` },
    },
    [`${domain}/Shipped/v1.schema.json`]: {
      $schema: DRAFT_07,
      type: 'object',
      properties: { orderId: { type: 'string' }, carrier: { type: 'string' } },
      required: ['orderId'],
    },
  };
}

/** Writes `files` under `<root>/events`; returns the project folder. */
export async function writeCatalog(files: Files, root?: string): Promise<string> {
  const project = root ?? (await mkdtemp(join(tmpdir(), 'evgen-registry-')));
  for (const [path, value] of Object.entries(files)) {
    const target = join(project, 'events', path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, `${JSON.stringify(value, null, 2)}\n`);
  }
  return project;
}
