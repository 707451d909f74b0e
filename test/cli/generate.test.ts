import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/model.js';
import { generate, GenerateError } from '../../src/codegen/generate.js';
import type { GeneratedFile, Target } from '../../src/codegen/target.js';

const catalog: Catalog = { root: '/nowhere', events: [], consumers: [] };

function target(name: string, files: readonly GeneratedFile[]): Target {
  return { name, description: name, generate: () => files };
}

describe('generate', () => {
  it('runs the targets, sorts by path and normalises to LF with one trailing newline', async () => {
    const files = await generate(catalog, [
      target('b', [{ path: 'z/last.ts', content: 'a\r\nb' }]),
      target('a', [{ path: 'first.ts', content: 'x\n\n\n' }]),
    ]);
    expect(files).toEqual([
      { path: 'first.ts', content: 'x\n' },
      { path: 'z/last.ts', content: 'a\nb\n' },
    ]);
  });

  it('passes the runtime import to targets and runs only the selected ones', async () => {
    const seen: string[] = [];
    const spy: Target = {
      name: 'spy',
      description: 'spy',
      generate: (context) => (seen.push(context.runtimeImport), []),
    };
    const other: Target = {
      name: 'other',
      description: 'other',
      generate: () => {
        throw new Error('must not run');
      },
    };
    await generate(catalog, [spy, other], {
      targetNames: ['spy'],
      runtimeImport: '@acme/evgen-runtime',
    });
    expect(seen).toEqual(['@acme/evgen-runtime']);
  });

  it('refuses unknown target names, unsafe paths and collisions', async () => {
    await expect(generate(catalog, [target('a', [])], { targetNames: ['b'] })).rejects.toThrow(
      'unknown target "b"; known targets: a',
    );
    for (const path of ['../escape.ts', '/abs.ts', 'a//b.ts', 'a\\b.ts', '']) {
      await expect(
        generate(catalog, [target('a', [{ path, content: '' }])]),
      ).rejects.toBeInstanceOf(GenerateError);
    }
    await expect(
      generate(catalog, [
        target('a', [{ path: 'x.ts', content: '' }]),
        target('b', [{ path: 'x.ts', content: '' }]),
      ]),
    ).rejects.toThrow('targets "a" and "b" both produce x.ts');
  });
});
