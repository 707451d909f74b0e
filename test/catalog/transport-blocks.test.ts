/**
 * Transport blocks of event.json are optional: a Kafka-only or RabbitMQ-only catalog loads and
 * builds (also with `--only`), a consumer whose events no single broker carries is refused, and
 * every documentation section a hint names exists on its page.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { DOC_SECTIONS, seeDocs } from '../../src/catalog/doc-sections.js';
import { runCli } from '../../src/cli/main.js';
import { captureOutput } from '../cli/capture-output.js';
import { listFiles } from '../golden/golden-support.js';
import { eventJson, payloadSchema, tempCatalog, type TempCatalog } from './temp-catalog.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const created: TempCatalog[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((catalog) => catalog.cleanup()));
});

/** `shop/<Name>` events with only the given transport blocks, plus consumer files. */
async function catalogOf(
  events: Record<string, ('kafka' | 'rabbitmq')[]>,
  consumers: Record<string, string[]> = {},
): Promise<TempCatalog> {
  const files: Record<string, unknown> = {};
  for (const [name, transports] of Object.entries(events)) {
    const { kafka, rabbitmq, ...rest } = eventJson('shop', name);
    files[`shop/${name}/event.json`] = {
      ...rest,
      ...(transports.includes('kafka') ? { kafka } : {}),
      ...(transports.includes('rabbitmq') ? { rabbitmq } : {}),
    };
    files[`shop/${name}/v1.schema.json`] = payloadSchema();
  }
  for (const [name, subscribes] of Object.entries(consumers))
    files[`_consumers/${name}.json`] = { description: `${name}.`, subscribes };
  const catalog = await tempCatalog(files);
  created.push(catalog);
  return catalog;
}

async function problemsOf(dir: string) {
  try {
    await loadCatalog(dir);
  } catch (error) {
    if (error instanceof CatalogError)
      return error.problems.map((p) => ({
        code: p.code,
        pointer: p.pointer,
        message: p.message,
        hint: p.hint,
      }));
    throw error;
  }
  throw new Error('expected the catalog to be refused');
}

async function build(
  catalog: TempCatalog,
  ...flags: string[]
): Promise<{ code: number; files: string[] }> {
  const output = captureOutput();
  try {
    const out = join(catalog.dir, 'generated');
    const code = await runCli([
      'build',
      '--events',
      catalog.events,
      '--out',
      out,
      '--no-cache',
      ...flags,
    ]);
    return { code, files: listFiles(out) };
  } finally {
    output.restore();
  }
}

describe('event.json transport blocks', () => {
  it('loads events with only kafka, only rabbitmq or neither; absent blocks stay absent', async () => {
    const catalog = await catalogOf({ OnKafka: ['kafka'], OnRabbit: ['rabbitmq'], InProcess: [] });
    const loaded = await loadCatalog(catalog.events);
    const byName = new Map(loaded.events.map((e) => [e.name, e]));
    expect(byName.get('OnKafka')).toMatchObject({ kafka: { topic: 'shop.events' } });
    expect(byName.get('OnKafka')!.rabbitmq).toBeUndefined();
    expect(byName.get('OnRabbit')).toMatchObject({ rabbitmq: { exchange: 'shop' } });
    expect(byName.get('OnRabbit')!.kafka).toBeUndefined();
    expect(Object.keys(byName.get('InProcess')!)).not.toContain('kafka');
    expect(Object.keys(byName.get('InProcess')!)).not.toContain('rabbitmq');
  });

  it('a Kafka-only catalog builds with every target and with --only kafka, writing no RabbitMQ files', async () => {
    const catalog = await catalogOf(
      { A: ['kafka'], B: ['kafka'] },
      { reader: ['shop.A', 'shop.B'] },
    );
    const all = await build(catalog);
    expect(all.code).toBe(0);
    expect(all.files.filter((f) => f.startsWith('kafka/'))).toEqual([
      'kafka/producers.ts',
      'kafka/topics.ts',
    ]);
    expect(all.files.filter((f) => f.startsWith('rabbitmq/'))).toEqual([]);
    const only = await build(catalog, '--only', 'types,validators,envelopes,kafka');
    expect(only.code).toBe(0);
  });

  it('a RabbitMQ-only catalog builds with --only rabbitmq, writing no Kafka files', async () => {
    const catalog = await catalogOf({ A: ['rabbitmq'] }, { reader: ['shop.A'] });
    const built = await build(catalog, '--only', 'types,validators,envelopes,rabbitmq');
    expect(built.code).toBe(0);
    expect(built.files.filter((f) => f.startsWith('rabbitmq/'))).toEqual([
      'rabbitmq/publishers.ts',
      'rabbitmq/topology.ts',
    ]);
    expect(built.files.filter((f) => f.startsWith('kafka/'))).toEqual([]);
  });

  it('in a mixed catalog, each transport target covers only its events and consumers', async () => {
    const catalog = await catalogOf(
      { Both: ['kafka', 'rabbitmq'], KafkaOnly: ['kafka'], RabbitOnly: ['rabbitmq'] },
      { 'kafka-reader': ['shop.Both', 'shop.KafkaOnly'], 'rabbit-reader': ['shop.RabbitOnly'] },
    );
    expect((await build(catalog)).code).toBe(0);
    const read = (path: string) => readFileSync(join(catalog.dir, 'generated', path), 'utf8');
    const topics = read('kafka/topics.ts');
    expect(topics).toContain("name: 'kafka-reader'");
    expect(topics).not.toContain('rabbit-reader');
    expect(topics).not.toContain('shop.RabbitOnly');
    const topology = read('rabbitmq/topology.ts');
    expect(topology).toContain("name: 'rabbit-reader'");
    // kafka-reader gets a queue bound to the one of its events that is on RabbitMQ.
    expect(topology).toContain("name: 'kafka-reader'");
    expect(topology).toContain("'shop.Both'");
    expect(topology).not.toContain('shop.KafkaOnly');
    expect(read('kafka/producers.ts')).not.toContain('RabbitOnly');
    expect(read('rabbitmq/publishers.ts')).not.toContain('KafkaOnly');
  });

  it('refuses a consumer whose events share no broker, pointing at the subscription', async () => {
    const catalog = await catalogOf(
      { OnKafka: ['kafka'], OnRabbit: ['rabbitmq'], InProcess: [] },
      {
        split: ['shop.InProcess', 'shop.OnKafka', 'shop.OnRabbit'],
        fine: ['shop.InProcess', 'shop.OnKafka'],
      },
    );
    expect(await problemsOf(catalog.events)).toEqual([
      {
        code: 'consumer-transports-disjoint',
        pointer: '/subscribes/2',
        message:
          'subscribes to "shop.OnRabbit" (only on RabbitMQ) and "shop.OnKafka" (only on Kafka): no broker carries both',
        hint: `declare the missing transport block in one event's event.json, or split the consumer into one per broker (${seeDocs('transports')})`,
      },
    ]);
  });

  it('a missing required key still names a documentation section', async () => {
    const catalog = await tempCatalog({
      'shop/A/event.json': { aggregate: 'Order', aggregateId: 'orderId', kafka: { topic: 't' } },
      'shop/A/v1.schema.json': payloadSchema(),
    });
    created.push(catalog);
    expect(await problemsOf(catalog.events)).toEqual([
      {
        code: 'missing-key',
        pointer: '',
        message: 'missing required key "description"',
        hint: `add "description" (${seeDocs('catalog')})`,
      },
    ]);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('documentation sections named in hints', () => {
  it('every section a hint can name is a heading of its page', () => {
    for (const { page, heading } of Object.values(DOC_SECTIONS)) {
      const headings = readFileSync(join(REPO, page), 'utf8')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => line.replace(/^#+ /, ''));
      expect(headings, `${page}: ${heading}`).toContain(heading);
      expect(headings.map(anchor), page).toContain(anchor(heading));
    }
  });

  it('a hint names a page with the heading the reader will find', () => {
    expect(seeDocs('catalog')).toBe('see docs/guides/catalog.md, "Catalog and `evgen build`"');
  });

  it('no source file names a documentation section except through seeDocs', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && !path.endsWith('doc-sections.ts')) {
          const text = readFileSync(path, 'utf8');
          if (/see the README,? ["'`(]|README section|README, "|see docs\/[\w/-]+\.md/.test(text)) {
            offenders.push(path);
          }
        }
      }
    };
    walk(join(REPO, 'src'));
    expect(offenders).toEqual([]);
  });
});
