/**
 * `evgen registry check` against the real registry: the registry's verdict on each unreleased
 * version printed beside evgen's, exit 0 when both accept it and 1 when they reject it.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../cli/capture-output.js';
import {
  DRAFT_07,
  DRAFT_2020,
  placedCatalog,
  writeCatalog,
  type Files,
} from '../support/registry/catalog.js';
import { uniqueDomain } from '../support/registry/test-registry.js';
import { useRegistryTests } from '../support/registry/registry-tests.js';

const tests = useRegistryTests();

/** `files` with every schema's `$schema` set to `dialect`. */
function inDialect(files: Files, dialect: string): Files {
  return Object.fromEntries(
    Object.entries(files).map(([path, value]) => [
      path,
      path.endsWith('.schema.json') ? { ...(value as object), $schema: dialect } : value,
    ]),
  );
}

/** v1 released and pushed; v2 (as given) unreleased in the working tree. */
async function releasedV1(v2: (v1: Record<string, unknown>) => unknown, dialect = DRAFT_07) {
  const domain = uniqueDomain();
  const { dir, events, files, registry } = await tests.project(
    domain,
    inDialect(placedCatalog(domain), dialect),
  );
  await unlink(join(events, domain, 'Placed', 'v2.schema.json'));
  expect((await runCliCaptured('check', '--events', events, '--update-lock')).code).toBe(0);
  expect((await registry('push')).code).toBe(0);
  const v1 = files[`${domain}/Placed/v1.schema.json`] as Record<string, unknown>;
  await writeCatalog({ [`${domain}/Placed/v2.schema.json`]: v2(v1) }, dir);
  return () => registry('check');
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

  it('a 2020-12 event Apicurio cannot judge: UNJUDGED with the reason and what to do, evgen verdict kept, exit 0', async () => {
    const check = await releasedV1(
      (v1) => ({
        ...v1,
        properties: { ...(v1.properties as object), note: { type: 'string' } },
      }),
      DRAFT_2020,
    );
    const result = await check();
    expect(result.stdout).toMatch(
      /UNJUDGED \S+\.Placed v2 .*evgen compatible, registry cannot judge: .*could not determine version/,
    );
    expect(result.stdout).toContain(
      "to get the registry's verdict: write the event's schemas in draft-07",
    );
    expect(result.code).toBe(0);
  });
});
