/**
 * Generates every target from the example catalog (`events/`) into a throw-away folder under
 * `test/rabbitmq/fixtures/<random>/out/`, so tests import and type-check real generated code.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadCatalog } from '../../../src/catalog/load-catalog.js';
import { generate } from '../../../src/codegen/generate.js';
import { allTargets } from '../../../src/codegen/targets/index.js';

const eventsDir = fileURLToPath(new URL('../../../events/', import.meta.url));

export interface GeneratedExample {
  /** Absolute output folder. */
  readonly dir: string;
  /** Imports a generated module by its output-relative path (`rabbitmq/publishers.ts`). */
  load<T>(path: string): Promise<T>;
  remove(): void;
}

export async function generateExample(): Promise<GeneratedExample> {
  const root = fileURLToPath(new URL(`../fixtures/${randomBytes(4).toString('hex')}/`, import.meta.url));
  const dir = join(root, 'out');
  const catalog = await loadCatalog(eventsDir);
  for (const file of await generate(catalog, allTargets)) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
  }
  return {
    dir,
    load: async <T>(path: string) => (await import(pathToFileURL(join(dir, path)).href)) as T,
    remove: () => {
      rmSync(root, { recursive: true, force: true });
      try {
        rmdirSync(join(root, '..'));
      } catch {
        // Another test file's output is still there.
      }
    },
  };
}
