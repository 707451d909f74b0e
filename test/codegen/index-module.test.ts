import { runTarget } from '../support/run-target.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/catalog/catalog-error.js';
import type { Catalog, EventDefinition } from '../../src/catalog/model.js';
import { indexModuleTarget } from '../../src/codegen/targets/index-module.js';
import { typecheck } from '../support/typecheck.js';

function event(domain: string, name: string): EventDefinition {
  const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
  return {
    domain,
    name,
    eventType: `${domain}.${name}`,
    description: 'd',
    aggregate: 'Thing',
    aggregateId: 'id',
    compatibility: 'FULL_TRANSITIVE',
    policy: 'evgen',
    kafka: { topic: 't' },
    rabbitmq: { exchange: 'e', routingKey: 'r' },
    dir: `${domain}/${name}`,
    versions: [{ version: 1, file: `${domain}/${name}/v1.schema.json`, schema, bundled: schema }],
  };
}

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const catalog = (events: EventDefinition[]): Catalog => ({
  root: '/nowhere',
  events,
  consumers: [],
});

describe('index target', () => {
  it('reports two events that would export the same names instead of shadowing one', async () => {
    const error = await Promise.resolve(
      runTarget(indexModuleTarget, {
        catalog: catalog([event('a', 'Created'), event('b', 'Created')]),
        runtimeImport: 'evgen/runtime',
      }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).problems[0]).toMatchObject({
      code: 'generated-name-collision',
      file: 'b/Created/event.json',
    });
    expect((error as CatalogError).message).toContain('CreatedV1Payload');
  });

  it('lists every event in catalog.ts and index.ts', async () => {
    const files = await runTarget(indexModuleTarget, {
      catalog: catalog([event('a', 'Created'), event('b', 'Deleted')]),
      runtimeImport: 'evgen/runtime',
    });
    expect(files.map((f) => f.path)).toEqual(['catalog.ts', 'index.ts']);
    const index = files[1]!.content;
    expect(index).toContain("export * from './a/created/envelope.js';");
    expect(index).toContain("export * from './b/deleted/validators.js';");
    expect(files[0]!.content).toContain("'b.Deleted': {\n    1: DeletedV1Envelope;\n  };");
  });

  it('an empty catalog still yields valid modules: no events, AnyEnvelope is never, parseEnvelope rejects everything', async () => {
    const files = await runTarget(indexModuleTarget, {
      catalog: catalog([]),
      runtimeImport: 'evgen/runtime',
    });
    const scratch = join(REPO, 'tmp', `index-empty-${randomBytes(4).toString('hex')}`);
    try {
      mkdirSync(scratch, { recursive: true });
      for (const file of files) writeFileSync(join(scratch, file.path), file.content);
      expect(typecheck([join(scratch, 'index.ts')])).toEqual([]);
      expect(files[0]!.content).toContain('export type AnyEnvelope = never;');
      const mod = (await import(join(scratch, 'catalog.ts'))) as {
        descriptors: unknown[];
        parseEnvelope: (input: unknown) => { ok: boolean };
      };
      expect(mod.descriptors).toEqual([]);
      expect(mod.parseEnvelope({ eventType: 'a.Created', schemaVersion: 1 }).ok).toBe(false);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
