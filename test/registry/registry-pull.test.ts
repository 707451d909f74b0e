/**
 * `evgen registry pull` against the real registry: a consumer repository gets the producer's
 * catalog back from what `push` registered, exactly (event.json, every version's bundled schema,
 * released in the lock), `evgen build` accepts it, and a second pull changes no byte.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { readReleaseLock, versionHash } from '../../src/compat/release-lock.js';
import { canonicalJson } from '../../src/common/canonical-json.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { placedCatalog } from '../support/registry/catalog.js';
import { useRegistryTests } from '../support/registry/registry-tests.js';

const tests = useRegistryTests();

async function filesUnder(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(root.length + 1)] = await readFile(path, 'utf8');
  }
  return out;
}

describe('evgen registry pull', () => {
  it('writes the pushed catalog back: same metadata, same bundled schemas, released in the lock; build accepts it; a second pull changes nothing', async () => {
    const producer = await tests.project();
    const { domain } = producer;
    const consumer = await tests.project(domain, {});
    expect((await producer.registry('push')).code).toBe(0);

    const subjects = [`${domain}.Placed`, `${domain}.Shipped`];
    const pull = await consumer.registry('pull', ...subjects);
    expect(pull.stderr).toBe('');
    expect(pull.code).toBe(0);
    expect(pull.stdout).toContain('pulled 2 events (3 versions)');

    const original = await loadCatalog(producer.events);
    const pulled = await loadCatalog(consumer.events);
    expect(pulled.events.map((e) => e.eventType)).toEqual(original.events.map((e) => e.eventType));
    for (const [index, event] of original.events.entries()) {
      const copy = pulled.events[index]!;
      const { root: _a, ...metadata } = { ...event, versions: undefined, root: undefined };
      const { root: _b, ...copyMetadata } = { ...copy, versions: undefined, root: undefined };
      expect(copyMetadata).toEqual(metadata);
      expect(copy.versions.map((v) => canonicalJson(v.bundled))).toEqual(
        event.versions.map((v) => canonicalJson(v.bundled)),
      );
      // event.json comes back as written.
      expect(
        JSON.parse(await readFile(join(consumer.events, copy.dir, 'event.json'), 'utf8')),
      ).toEqual(JSON.parse(await readFile(join(producer.events, event.dir, 'event.json'), 'utf8')));
    }
    const lock = await readReleaseLock(consumer.events);
    expect(lock?.events.get(`${domain}/Placed`)).toEqual(
      new Map(original.events[0]!.versions.map((v) => [v.version, versionHash(v.bundled)])),
    );

    // Pushing the pulled catalog registers nothing new: the round trip is exact for the registry.
    const again = await consumer.registry('push');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 versions registered');

    const before = await filesUnder(consumer.events);
    expect((await consumer.registry('pull', ...subjects)).code).toBe(0);
    expect(await filesUnder(consumer.events)).toEqual(before);

    const build = await runCliCaptured(
      'build',
      '--events',
      consumer.events,
      '--out',
      join(consumer.dir, 'generated'),
    );
    expect(build.stderr).toBe('');
    expect(build.code).toBe(0);
  });

  it('refuses, writing nothing, when the registry holds a different schema for a version the lock released', async () => {
    const producer = await tests.project();
    const { domain } = producer;
    const consumer = await tests.project(domain, {});
    const subject = `${domain}.Shipped`;
    expect((await producer.registry('push')).code).toBe(0);
    expect((await consumer.registry('pull', subject)).code).toBe(0);
    const before = await filesUnder(consumer.events);
    // Someone replaces the subject in the registry with a different v1.
    await tests.registry.client.deleteSubject(subject);
    await tests.registry.client.deleteSubject(subject, true);
    const changed = placedCatalog(domain);
    changed[`${domain}/Shipped/v1.schema.json`] = {
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    };
    const other = await tests.project(domain, changed);
    expect((await other.registry('push')).code).toBe(0);

    const result = await consumer.registry('pull', subject);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('released-version-differs');
    expect(await filesUnder(consumer.events)).toEqual(before);
  });
});
