/**
 * `evgen registry check` against the real registry: the registry's verdict on each unreleased
 * version printed beside evgen's, exit 0 when both accept it and 1 when they reject it.
 */
import { rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../cli/capture-output.js';
import {
  connectTestRegistry,
  uniqueDomain,
  type TestRegistry,
} from '../support/registry/test-registry.js';
import { placedCatalog, writeCatalog } from './registry-catalog.js';

let registry: TestRegistry;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  registry = await connectTestRegistry();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** v1 released and pushed; v2 (as given) unreleased in the working tree. */
async function releasedV1(v2: (v1: Record<string, unknown>) => unknown) {
  const domain = uniqueDomain();
  const files = placedCatalog(domain);
  const dir = await writeCatalog(files);
  cleanups.push(async () => {
    await registry.cleanup(domain);
    await rm(dir, { recursive: true, force: true });
  });
  const events = join(dir, 'events');
  await unlink(join(events, domain, 'Placed', 'v2.schema.json'));
  expect((await runCliCaptured('check', '--events', events, '--update-lock')).code).toBe(0);
  const push = ['registry', 'push', '--events', events, '--registry', registry.url];
  expect((await runCliCaptured(...push)).code).toBe(0);
  const v1 = files[`${domain}/Placed/v1.schema.json`] as Record<string, unknown>;
  await writeCatalog({ [`${domain}/Placed/v2.schema.json`]: v2(v1) }, dir);
  return () => runCliCaptured('registry', 'check', '--events', events, '--registry', registry.url);
}

describe('evgen registry check', () => {
  it('prints both verdicts for a compatible unreleased version and exits 0', async () => {
    const check = await releasedV1((v1) => ({
      ...v1,
      properties: { ...(v1.properties as object), note: { type: 'string' } },
    }));
    const result = await check();
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /Placed v2 \(subject .*\): evgen compatible, registry compatible/,
    );
    expect(result.code).toBe(0);
  });

  it('prints both verdicts for an incompatible unreleased version and exits 1', async () => {
    const check = await releasedV1((v1) => ({
      ...v1,
      properties: { ...(v1.properties as object), total: { type: 'string' } },
    }));
    const result = await check();
    expect(result.stdout).toMatch(/Placed v2 .*evgen incompatible \(.*\), registry incompatible/);
    expect(result.code).toBe(1);
  });
});
