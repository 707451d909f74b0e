/**
 * Every ```ts block of the README and docs/ compiles, as a reader would paste it into a service:
 * one module per block beside the example catalog's generated/ (and the `evgen scaffold` handlers
 * and the Prisma client a recipe generates), with `evgen-runtime` and its entry points mapped to
 * the public declarations the package ships and nothing else.
 *
 * Directives, in an HTML comment right before a block (invisible on any Git host):
 *   <!-- prelude: declare const payload: OrderCreatedV2Payload; -->   compiled before the block,
 *        for fragments that use names set up elsewhere on the page;
 *   <!-- typecheck: skip <reason> -->   only for a block shown on purpose as wrong.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../cli/capture-output.js';
import {
  REPO,
  codeBlocks,
  documentationFiles,
  unfencedCodeLines,
  type CodeBlock,
} from './markdown-blocks.js';

/** The runtime's entry points and the source each is built from. */
const ENTRIES: Record<string, string> = {
  'evgen-runtime': 'index',
  'evgen-runtime/kafkajs': 'kafkajs',
  'evgen-runtime/platformatic-kafka': 'platformatic-kafka',
  'evgen-runtime/kysely': 'kysely',
  'evgen-runtime/knex': 'knex',
  'evgen-runtime/drizzle': 'drizzle',
  'evgen-runtime/typeorm': 'typeorm',
  'evgen-runtime/prisma': 'prisma',
};

// The API pages show declarations rendered from the sources (test/docs/api-reference.ts), not examples.
const blocks = documentationFiles()
  .filter((file) => !file.includes('/docs/reference/api/'))
  .flatMap((file) => codeBlocks(file))
  .filter((block) => block.lang === 'ts');
const checked = blocks.filter((block) => !block.directive?.startsWith('typecheck: skip'));

function prelude(block: CodeBlock): string {
  const match = /^prelude:\s*([\s\S]*)$/.exec(block.directive ?? '');
  return match === null ? '' : `${match[1]!}\n`;
}

function repoOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(REPO, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, REPO).options;
}

let dir: string;
let declarations: string;
const fileOf = new Map<string, CodeBlock>();

beforeAll(async () => {
  dir = join(REPO, 'test/docs/fixtures', `snippets-${process.pid}`);
  await mkdir(dir, { recursive: true });
  await symlink(join(REPO, 'generated'), join(dir, 'generated'), 'dir');
  const scaffold = await runCliCaptured(
    'scaffold',
    '--handlers',
    join(dir, 'handlers'),
    '--out',
    join(dir, 'generated'),
  );
  expect(scaffold.code, scaffold.stderr).toBe(0);
  // The Prisma recipe's schema, generated as the recipe says (no engine binary is downloaded).
  const prismaSchema = documentationFiles()
    .flatMap((file) => codeBlocks(file))
    .find((block) => block.lang === 'prisma');
  if (prismaSchema !== undefined) {
    await mkdir(join(dir, 'prisma'));
    await writeFile(join(dir, 'prisma/schema.prisma'), prismaSchema.code);
    await promisify(execFile)(
      join(REPO, 'node_modules/.bin/prisma'),
      ['generate', '--schema', join(dir, 'prisma/schema.prisma')],
      {
        cwd: dir,
        env: {
          ...process.env,
          PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
          PRISMA_HIDE_UPDATE_MESSAGE: '1',
          CHECKPOINT_DISABLE: '1',
        },
      },
    );
  }
  // The runtime's declarations as the package ships them.
  declarations = await mkdtemp(join(tmpdir(), 'evgen-doc-snippets-'));
  const emit = ts
    .createProgram(
      Object.values(ENTRIES).map((name) => join(REPO, `src/runtime/${name}.ts`)),
      {
        ...repoOptions(),
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: join(REPO, 'src/runtime'),
        outDir: declarations,
        paths: {},
      },
    )
    .emit();
  expect(emit.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual(
    [],
  );
  for (const block of checked) {
    const name = `${block.file.replace(/[^A-Za-z0-9]+/g, '-')}-${block.line}.ts`;
    const code = `${prelude(block)}${block.code}`;
    // A block without import or export is a script to TypeScript; make each one a module.
    await writeFile(
      join(dir, name),
      /^\s*(import|export)\b/m.test(code) ? code : `${code}\nexport {};\n`,
    );
    fileOf.set(join(dir, name), block);
  }
}, 300_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  if (declarations !== undefined) await rm(declarations, { recursive: true, force: true });
});

describe('TypeScript snippets of the documentation', () => {
  it('finds the snippets (README and docs/)', () => {
    expect(checked.length).toBeGreaterThan(15);
    expect(checked.some((block) => block.file === 'README.md')).toBe(true);
  });

  it('has no TypeScript outside fenced blocks (indented code is never compiled)', () => {
    const unfenced = documentationFiles()
      .filter((file) => !file.includes('/docs/reference/api/'))
      .flatMap((file) => unfencedCodeLines(file))
      .map(({ file, line, text }) => `${file}:${line} ${text}`);
    expect(unfenced, 'put these lines in a ```ts block (with a prelude if needed)').toEqual([]);
  });

  it('a snippet opts out only with a reason', () => {
    const skipped = blocks.filter((block) => block.directive?.startsWith('typecheck: skip'));
    for (const block of skipped) {
      expect(block.directive, `${block.file}:${block.line}`).toMatch(/^typecheck: skip \S.{10,}/);
    }
  });

  it('every snippet compiles against the public declarations', () => {
    const options: ts.CompilerOptions = {
      ...repoOptions(),
      noEmit: true,
      noUnusedLocals: false,
      noUnusedParameters: false,
      paths: Object.fromEntries(
        Object.entries(ENTRIES).map(([specifier, name]) => [
          specifier,
          [join(declarations, `${name}.d.ts`)],
        ]),
      ),
    };
    const program = ts.createProgram([...fileOf.keys()], options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file !== undefined && fileOf.has(d.file.fileName))
      .map((d) => {
        const block = fileOf.get(d.file!.fileName)!;
        const line = d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line;
        const preludeLines = prelude(block).split('\n').length - 1;
        const at = line < preludeLines ? 'prelude' : String(block.line + 1 + line - preludeLines);
        return `${block.file}:${at} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
    expect(relative(REPO, dir)).toMatch(/^test\/docs\/fixtures\//);
  }, 300_000);
});
