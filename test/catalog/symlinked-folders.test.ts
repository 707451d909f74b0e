/**
 * Symbolic links inside the events folder are never followed, and never skipped silently: each
 * gets a problem naming its path.
 */
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CatalogError, type CatalogProblem } from '../../src/catalog/catalog-error.js';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { oneEvent, tempCatalog, writeFiles, type TempCatalog } from './temp-catalog.js';

let catalog: TempCatalog;
let elsewhere: string;

beforeEach(async () => {
  catalog = await tempCatalog(oneEvent());
  elsewhere = await mkdtemp(join(tmpdir(), 'evgen-elsewhere-'));
  // A complete second catalog outside the events folder, for the links to point at.
  await writeFiles(elsewhere, oneEvent());
});
afterEach(async () => {
  await catalog.cleanup();
  await rm(elsewhere, { recursive: true, force: true });
});

async function problems(): Promise<CatalogProblem[]> {
  try {
    await loadCatalog(catalog.events);
  } catch (error) {
    if (error instanceof CatalogError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a CatalogError');
}

describe('loadCatalog and symbolic links', () => {
  it('reports a symlinked domain folder with its path', async () => {
    await symlink(join(elsewhere, 'shop'), join(catalog.events, 'billing'));
    const found = await problems();
    expect(found).toHaveLength(1);
    expect(found[0]!.code).toBe('symbolic-link');
    expect(found[0]!.file).toMatch(/events\/billing$/);
  });

  it('reports a symlinked event folder and a symlinked schema file with their paths', async () => {
    await symlink(
      join(elsewhere, 'shop', 'OrderPlaced'),
      join(catalog.events, 'shop', 'OrderCopied'),
    );
    await symlink(
      join(elsewhere, 'shop', 'OrderPlaced', 'v1.schema.json'),
      join(catalog.events, 'shop', 'OrderPlaced', 'v2.schema.json'),
    );
    const found = await problems();
    expect(found.map((p) => [p.code, p.file.replace(/^.*\/events\//, 'events/')])).toEqual([
      ['symbolic-link', 'events/shop/OrderCopied'],
      ['symbolic-link', 'events/shop/OrderPlaced/v2.schema.json'],
    ]);
  });

  it('still skips hidden entries such as .git silently', async () => {
    await writeFiles(catalog.events, { '.git/config': 'x', 'shop/.DS_Store': 'x' });
    await expect(loadCatalog(catalog.events)).resolves.toMatchObject({ events: [{}] });
  });
});
