/**
 * Generates the example catalog (`events/`) into a throw-away folder `fixtures/<random>/out/`
 * beside the calling test file (inside the repository, so generated code resolves
 * `evgen-runtime` like a user's would), for tests that import or type-check real generated code.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { Catalog } from '../../src/catalog/model.js';
import { generate } from '../../src/codegen/generate.js';
import { allTargets } from '../../src/codegen/targets/index.js';

const eventsDir = fileURLToPath(new URL('../../events/', import.meta.url));

export interface GeneratedExample {
  readonly catalog: Catalog;
  /** Absolute output folder. */
  readonly dir: string;
  /** Imports a generated module by its output-relative path (`rabbitmq/publishers.ts`). */
  load<T>(path: string): Promise<T>;
  /** Deletes the folder (and `fixtures/` when no other test file's output is left in it). */
  remove(): void;
}

/**
 * `besideFile` is the caller's `import.meta.url`; `targetNames` limits the targets (default: all);
 * `edit` changes the loaded catalog before generation (a variant of the example, e.g. another
 * compatibility mode, without a second events folder).
 */
export async function generateExample(
  besideFile: string,
  targetNames?: readonly string[],
  edit: (catalog: Catalog) => Catalog = (catalog) => catalog,
): Promise<GeneratedExample> {
  const root = fileURLToPath(new URL(`./fixtures/${randomBytes(4).toString('hex')}/`, besideFile));
  const dir = join(root, 'out');
  const catalog = edit(await loadCatalog(eventsDir));
  for (const file of await generate(
    catalog,
    allTargets,
    targetNames ? { targetNames: [...targetNames] } : undefined,
  )) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
  }
  return {
    catalog,
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
