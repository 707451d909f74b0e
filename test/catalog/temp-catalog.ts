/** Writes a small catalog into a fresh temporary folder for one test; remove it with `cleanup`. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type CatalogFiles = Record<string, unknown>;

export interface TempCatalog {
  /** The temporary folder; the catalog is in `<dir>/events`. */
  readonly dir: string;
  readonly events: string;
  cleanup(): Promise<void>;
}

/** Files are paths relative to `events/`; objects are written as JSON, strings verbatim. */
export async function tempCatalog(files: CatalogFiles): Promise<TempCatalog> {
  const dir = await mkdtemp(join(tmpdir(), 'evgen-catalog-'));
  const events = join(dir, 'events');
  await mkdir(events, { recursive: true });
  await writeFiles(events, files);
  return { dir, events, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeFiles(root: string, files: CatalogFiles): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(
      target,
      typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`,
    );
  }
}

export const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
export const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

export function eventJson(
  domain: string,
  name: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    description: `${name} happened.`,
    aggregate: 'Order',
    aggregateId: 'orderId',
    kafka: { topic: `${domain}.events` },
    rabbitmq: { exchange: domain, routingKey: `${domain}.${name}` },
    ...extra,
  };
}

export function payloadSchema(
  extraProperties: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    $schema: DRAFT_07,
    type: 'object',
    properties: { orderId: { type: 'string' }, ...extraProperties },
    required: ['orderId'],
    additionalProperties: false,
    ...extra,
  };
}

/** One valid event `shop/OrderPlaced` plus whatever else is given. */
export function oneEvent(files: CatalogFiles = {}, schema = payloadSchema()): CatalogFiles {
  return {
    'shop/OrderPlaced/event.json': eventJson('shop', 'OrderPlaced'),
    'shop/OrderPlaced/v1.schema.json': schema,
    ...files,
  };
}
