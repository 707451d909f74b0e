/**
 * Every target declares the targets whose files its files import (`Target.requires`): generating
 * one target together with what it requires (transitively) leaves no relative import pointing at
 * a file that was not generated. Checked on the example catalog, whose events and consumers use
 * every target.
 */
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import type { Catalog } from '../../src/catalog/model.js';
import { generate, requiredClosure, selectTargets } from '../../src/codegen/generate.js';
import { allTargets } from '../../src/codegen/targets/index.js';

const events = fileURLToPath(new URL('../../events', import.meta.url));

/** Relative imports and re-exports of generated files that name no file in `paths`. */
function danglingImports(files: readonly { path: string; content: string }[]): string[] {
  const paths = new Set(files.map((file) => file.path));
  const dangling: string[] = [];
  for (const file of files) {
    for (const match of file.content.matchAll(
      /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g,
    )) {
      const target = posix.normalize(posix.join(posix.dirname(file.path), match[1]!));
      // `./x.js` is satisfied by x.js or by x.ts (TypeScript's module resolution).
      const candidates = [target, target.replace(/\.js$/, '.ts')];
      if (!candidates.some((candidate) => paths.has(candidate)))
        dangling.push(`${file.path} → ${match[1]}`);
    }
  }
  return dangling;
}

let catalog: Catalog;
beforeAll(async () => {
  catalog = await loadCatalog(events);
});

describe('Target.requires', () => {
  it('names only known targets', () => {
    const known = new Set(allTargets.map((target) => target.name));
    for (const target of allTargets)
      for (const name of target.requires ?? [])
        expect(known, `${target.name} → ${name}`).toContain(name);
  });

  it.each(allTargets.map((target) => target.name))(
    '%s with what it requires generates no import of a missing file',
    async (name) => {
      const names = requiredClosure(allTargets, [name]);
      const files = await generate(catalog, allTargets, { targetNames: names });
      expect(files.some((file) => file.path.endsWith('.ts'))).toBe(true);
      expect(danglingImports(files)).toEqual([]);
    },
  );

  it('is needed: without its requirements a target would import missing files', async () => {
    // The reason for the check: outbox alone imports envelope.ts and types.ts.
    const outbox = allTargets.find((target) => target.name === 'outbox')!;
    const outboxAlone = await generate(catalog, [{ ...outbox, requires: [] }]);
    expect(danglingImports(outboxAlone).length).toBeGreaterThan(0);
    expect(() => selectTargets(allTargets, ['outbox'], '--only')).toThrow(
      'target "outbox" needs "envelopes", "types", which are not selected',
    );
  });

  it('closes a selection over its requirements in the registry order', () => {
    expect(requiredClosure(allTargets, ['index'])).toEqual([
      'types',
      'validators',
      'envelopes',
      'index',
    ]);
    expect(requiredClosure(allTargets, ['outbox', 'kafka'])).toEqual([
      'types',
      'validators',
      'envelopes',
      'kafka',
      'outbox',
    ]);
  });
});
