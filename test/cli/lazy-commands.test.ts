/**
 * The CLI loads only what the command it runs needs: `evgen --version` loads no command at all,
 * `evgen check` never loads the code generator (targets, templates, prettier,
 * json-schema-to-typescript, ts-morph). Measured by the modules the real process resolves,
 * never by time.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const recorder = fileURLToPath(new URL('../support/record-module-loads.mjs', import.meta.url));
const run = promisify(execFile);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evgen-lazy-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI and returns its exit code and the module URLs it resolved. */
async function loadedBy(args: readonly string[]): Promise<{ code: number; modules: string[] }> {
  const log = join(dir, `modules-${args.join('-').replace(/[^a-z-]/g, '')}.log`);
  let code = 0;
  try {
    await run(
      process.execPath,
      ['--import', 'tsx', '--import', recorder, 'src/cli/main.ts', ...args],
      {
        cwd: repo,
        env: { ...process.env, EVGEN_MODULE_LOG: log },
      },
    );
  } catch (error) {
    code = (error as { code: number }).code;
  }
  const modules = (await readFile(log, 'utf8')).split('\n').filter((line) => line !== '');
  return { code, modules };
}

const GENERATOR = [
  '/src/codegen/generate.ts',
  '/src/codegen/targets/',
  '/src/codegen/render/',
  '/node_modules/prettier/',
  '/node_modules/json-schema-to-typescript/',
  '/node_modules/ts-morph/',
  '/node_modules/handlebars/',
];

function matching(modules: readonly string[], parts: readonly string[]): string[] {
  return modules.filter((url) => parts.some((part) => url.includes(part)));
}

it('--version loads no command module, no generator, no schema or database library and no commander', async () => {
  const { code, modules } = await loadedBy(['--version']);
  expect(code).toBe(0);
  expect(modules.some((url) => url.endsWith('/src/cli/main.ts'))).toBe(true);
  expect(
    matching(modules, [
      ...GENERATOR,
      '/src/cli/commands/build',
      '/src/cli/commands/check',
      '/src/compat/',
      '/src/catalog/load-catalog',
      '/node_modules/ajv/',
      '/node_modules/pg/',
      '/node_modules/amqplib/',
      '/node_modules/commander/',
    ]),
  ).toEqual([]);
});

it('check loads the checker but not the code generator', async () => {
  const { code, modules } = await loadedBy(['check', '--events', 'events']);
  expect(code).toBe(0);
  expect(matching(modules, ['/src/compat/check-catalog'])).not.toEqual([]);
  expect(matching(modules, GENERATOR)).toEqual([]);
});

it('build loads the code generator (the recorder sees it)', async () => {
  const { code, modules } = await loadedBy([
    'build',
    '--no-cache',
    '--only',
    'types',
    '--out',
    join(dir, 'out'),
  ]);
  expect(code).toBe(0);
  expect(matching(modules, ['/src/codegen/targets/', '/node_modules/prettier/'])).not.toEqual([]);
  // The types are checked with prettier's parser; the TypeScript compiler is for scaffolding only.
  expect(
    matching(modules, [
      '/node_modules/ts-morph/',
      '/node_modules/@ts-morph/',
      '/node_modules/typescript/',
    ]),
  ).toEqual([]);
});
