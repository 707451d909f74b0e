/**
 * A service over a 1000-event catalog (2 500 versions) must type-check. A discriminated union of
 * that many envelopes makes TypeScript give up on ordinary expressions such as
 * `r.ok ? r.envelope : undefined` and on the consumer's descriptor list (TS2590, "union type that
 * is too complex to represent"), so above `UNION_ENVELOPE_LIMIT` versions `AnyEnvelope` is the
 * common envelope type, narrowed with `isEventType`. Minimal payloads keep generation and the
 * type-check cheap: only the number of events matters here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { generate } from '../../src/codegen/generate.js';
import { allTargets } from '../../src/codegen/targets/index.js';
import { UNION_ENVELOPE_LIMIT } from '../../src/codegen/targets/index-module.js';
import { writeSyntheticCatalog } from '../support/synthetic-catalog.js';
import { REPO_ROOT, typecheck } from '../support/typecheck.js';

const scratch = join(REPO_ROOT, 'tmp', `catalog-scale-${randomBytes(4).toString('hex')}`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function buildInto(events: number, name: string): Promise<string> {
  const root = join(scratch, name);
  const names = writeSyntheticCatalog(join(root, 'events'), { events, minimal: true });
  const catalog = await loadCatalog(join(root, 'events'));
  const files = await generate(catalog, allTargets, {
    // Everything a service imports; the outbox migration is SQL.
    targetNames: ['types', 'validators', 'envelopes', 'index', 'consumers', 'rabbitmq', 'kafka'],
    runtimeImport: 'evgen-runtime',
  });
  for (const file of files) {
    const path = join(root, 'generated', file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
  }
  const first = names[0]!;
  // Event 0 has two versions; v2 adds `addedInV2` (see minimalSchema).
  writeFileSync(
    join(root, 'service.ts'),
    `import {
  isEventType,
  parseEnvelope,
  type AnyEnvelope,
  type EnvelopeOfType,
  type EventType,
} from './generated/index.js';
import { createSyntheticServiceConsumer } from './generated/consumers/synthetic-service.js';

export function read(raw: string): AnyEnvelope | undefined {
  const r = parseEnvelope(raw);
  return r.ok ? r.envelope : undefined;
}

export function added(envelope: AnyEnvelope): number | undefined {
  if (isEventType(envelope, '${first.domain}.${first.name}')) {
    const typed: EnvelopeOfType<'${first.domain}.${first.name}'> = envelope;
    if (typed.schemaVersion === 2) return typed.payload.addedInV2;
    // @ts-expect-error version 1 has no addedInV2
    return typed.payload.addedInV2;
  }
  return undefined;
}

// @ts-expect-error not an event type of the catalog
export const unknownType: EventType = 'nowhere.Nothing';

export const all = [read('{}'), undefined];
export const consumer = createSyntheticServiceConsumer;
`,
  );
  return join(root, 'service.ts');
}

describe('generated code at catalog scale', () => {
  it('a service over 1000 events (2500 versions) type-checks: AnyEnvelope is not a union there, isEventType narrows', async () => {
    const service = await buildInto(1000, 'large');
    const catalogTs = (await import('node:fs')).readFileSync(
      join(dirname(service), 'generated', 'catalog.ts'),
      'utf8',
    );
    expect(2500).toBeGreaterThan(UNION_ENVELOPE_LIMIT);
    expect(catalogTs).toContain('export type AnyEnvelope = Envelope<EventType, number, unknown>;');
    expect(typecheck([service])).toEqual([]);
  }, 600_000);
});
