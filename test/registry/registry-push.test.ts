/**
 * `evgen registry push` against the real registry (Apicurio 3.0.9, Confluent API): version
 * order, idempotence, levels from the modes, the dry run, subject name strategies, and the
 * refusals that come before anything is written.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRegisteredSchema } from '../../src/registry/registered-schema.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { DRAFT_2020, placedCatalog, writeCatalog } from '../support/registry/catalog.js';
import { useRegistryTests } from '../support/registry/registry-tests.js';
import { uniqueDomain } from '../support/registry/test-registry.js';

const tests = useRegistryTests();

async function levelOf(subject: string): Promise<unknown> {
  const answer = await fetch(`${tests.registry.url}/config/${encodeURIComponent(subject)}`);
  return ((await answer.json()) as { compatibilityLevel?: unknown }).compatibilityLevel;
}

describe('evgen registry push', () => {
  it('registers every version in order under RecordNameStrategy, sets the levels, and changes nothing when run again', async () => {
    const { domain, registry: run } = await tests.project();
    const first = await run('push');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const placed = `${domain}.Placed`;
    const versions = await tests.registry.client.versions(placed);
    expect(versions).toEqual([1, 2]);
    const v1 = (await tests.registry.client.version(placed, 1))!;
    const v2 = (await tests.registry.client.version(placed, 2))!;
    const read1 = readRegisteredSchema(v1.schema);
    const read2 = readRegisteredSchema(v2.schema);
    expect(typeof read1 === 'object' && read1.annotation.version).toBe(1);
    expect(typeof read2 === 'object' && read2.annotation.version).toBe(2);
    // The `_common` reference is inlined: the registered schema is self-contained.
    expect(v1.schema).not.toContain('money.schema.json');
    expect(await levelOf(placed)).toBe('BACKWARD_TRANSITIVE');
    expect(await levelOf(`${domain}.Shipped`)).toBe('BACKWARD');

    const second = await run('push');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`v1 already registered (id ${v1.id})`);
    expect(second.stdout).toContain(`v2 already registered (id ${v2.id})`);
    expect(second.stdout).toContain('0 versions registered');
    expect(await tests.registry.client.versions(placed)).toEqual([1, 2]);
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    const { domain, registry: run } = await tests.project();
    const result = await run('push', '--dry-run');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `${domain}.Placed (${domain}.Placed): level BACKWARD_TRANSITIVE`,
    );
    expect(result.stdout).toContain('  v2 register');
    expect(await tests.registry.client.versions(`${domain}.Placed`)).toBeUndefined();
  });

  it('names subjects <topic>-<type> under TopicRecordNameStrategy, and refuses TopicNameStrategy for a shared topic', async () => {
    const { domain, registry: run } = await tests.project();
    const shared = await run('push', '--subject-strategy', 'TopicNameStrategy');
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain('shared-subject');
    expect(shared.stderr).toContain(`${domain}.events-value`);
    expect((await tests.registry.client.subjects()).filter((s) => s.includes(domain))).toEqual([]);

    const result = await run('push', '--subject-strategy', 'TopicRecordNameStrategy');
    expect(result.code).toBe(0);
    expect(await tests.registry.client.versions(`${domain}.events-${domain}.Placed`)).toEqual([
      1, 2,
    ]);
  });

  it('refuses before writing anything when a released version differs from the registered one', async () => {
    const domain = uniqueDomain();
    const files = placedCatalog(domain);
    const { dir, registry: run } = await tests.project(domain, files);
    // Release v1 only, then push it.
    await unlink(join(dir, 'events', domain, 'Placed', 'v2.schema.json'));
    expect(
      (await runCliCaptured('check', '--events', join(dir, 'events'), '--update-lock')).code,
    ).toBe(0);
    expect((await run('push')).code).toBe(0);
    // v1 edited in place (a released version) and a new v2 next to it.
    const v1 = files[`${domain}/Placed/v1.schema.json`] as Record<string, unknown>;
    await writeCatalog(
      {
        [`${domain}/Placed/v1.schema.json`]: { ...v1, required: ['orderId'] },
        [`${domain}/Placed/v2.schema.json`]: files[`${domain}/Placed/v2.schema.json`],
      },
      dir,
    );
    const result = await run('push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('released-version-differs');
    expect(result.stderr).toContain('nothing was written');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await tests.registry.client.versions(`${domain}.Placed`)).toEqual([1]);
  });

  it('exits 2 with the registry verdict when the registry refuses a version as incompatible (409)', async () => {
    const domain = uniqueDomain();
    const files = placedCatalog(domain);
    const v1 = files[`${domain}/Placed/v1.schema.json`] as { properties: Record<string, unknown> };
    // v2 changes the type of total: incompatible under BACKWARD_TRANSITIVE.
    files[`${domain}/Placed/v2.schema.json`] = {
      ...v1,
      properties: { ...v1.properties, total: { type: 'string' } },
    };
    const { registry: run } = await tests.project(domain, files);
    const result = await run('push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('registry-incompatible');
    expect(result.stderr).toContain('409');
    expect(await tests.registry.client.versions(`${domain}.Placed`)).toEqual([1]);
  });

  it('a 2020-12 event under a level other than NONE: Apicurio answers 500, the user is told why and what to do, and doing it works', async () => {
    const domain = uniqueDomain();
    const v1 = {
      $schema: DRAFT_2020,
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    };
    const files = {
      [`${domain}/Noted/event.json`]: {
        description: 'A note was added to an order.',
        aggregate: 'Order',
        aggregateId: 'orderId',
        compatibility: 'BACKWARD',
        kafka: { topic: `${domain}.events` },
      },
      [`${domain}/Noted/v1.schema.json`]: v1,
      [`${domain}/Noted/v2.schema.json`]: {
        ...v1,
        properties: { ...v1.properties, note: { type: 'string' } },
      },
    };
    const { registry: run } = await tests.project(domain, files);
    const subject = `${domain}.Noted`;
    const result = await run('push');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('registry-dialect');
    expect(result.stderr).toContain('could not determine version');
    expect(result.stderr).toContain('2019-09/2020-12');
    expect(result.stderr).toContain('draft-07');
    expect(result.stderr).toContain(`config/${subject} with {"compatibility":"NONE"}`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // What was written before the refusal is printed: v1 (the first version needs no check).
    expect(result.stdout).toMatch(new RegExp(`registered ${subject} v1 \\(id \\d+\\)`));
    expect(await tests.registry.client.versions(subject)).toEqual([1]);

    // Doing what the hint says: level NONE, push without levels.
    await tests.registry.client.setLevel(subject, 'NONE');
    const again = await run('push', '--no-levels');
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(await tests.registry.client.versions(subject)).toEqual([1, 2]);
  });
});
