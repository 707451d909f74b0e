/**
 * The package's layering, checked on the real import statements: the runtime (what services
 * ship) never pulls in generator code, generated code reaches evgen only through
 * `evgen/runtime`, and no module of src/ imports itself through others (an import circle).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && extensions.some((extension) => entry.name.endsWith(extension)),
    )
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
function importSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /\bfrom\s+['"]([^'"]+)['"]/g,
    /\bimport\s+['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) specifiers.push(match[1]!);
  return specifiers;
}

/** The .ts file a relative specifier names (`./x.js` → x.ts, `./dir` → dir/index.ts), if any. */
function resolveSource(from: string, specifier: string): string | undefined {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [
    target.replace(/\.js$/, '.ts'),
    `${target}.ts`,
    join(target, 'index.ts'),
  ])
    if (existsSync(candidate) && candidate.endsWith('.ts')) return candidate;
  return undefined;
}

/**
 * The import circles among `files`: strongly connected components (Tarjan) of the graph of
 * relative imports, type-only ones included (a circle of types is a type in the wrong module).
 */
function importCycles(files: readonly string[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const file of files)
    edges.set(
      file,
      importSpecifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolveSource(file, specifier))
        .filter((target): target is string => target !== undefined),
    );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}

describe('import boundaries', () => {
  const runtimeDir = join(root, 'src/runtime');
  const runtimeFiles = filesUnder(runtimeDir, ['.ts']);

  it('finds the runtime sources', () => {
    expect(runtimeFiles.length).toBeGreaterThan(10);
  });

  it('src/runtime imports nothing from the rest of src/ (generator, CLI, compat)', () => {
    const offenders: string[] = [];
    for (const file of runtimeFiles) {
      for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (specifier === 'evgen' || specifier.startsWith('evgen/'))
          offenders.push(`${relative(root, file)} → ${specifier}`);
        if (!specifier.startsWith('.')) continue;
        const target = resolve(dirname(file), specifier);
        if (relative(runtimeDir, target).startsWith('..'))
          offenders.push(`${relative(root, file)} → ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  /** Relative imports of files under `from` that land under one of `forbidden` (folders under src/). */
  function importsInto(from: string, forbidden: readonly string[]): string[] {
    const offenders: string[] = [];
    for (const file of filesUnder(join(root, 'src', from), ['.ts'])) {
      for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const target = relative(join(root, 'src'), resolve(dirname(file), specifier));
        if (forbidden.some((folder) => target === folder || target.startsWith(`${folder}/`)))
          offenders.push(`${relative(root, file)} → ${specifier}`);
      }
    }
    return offenders;
  }

  it('src/catalog imports nothing from the generator, the checker or the CLI', () => {
    expect(importsInto('catalog', ['codegen', 'compat', 'cli', 'scaffold'])).toEqual([]);
  });

  it('src/common and src/schema (shared by catalog, compat and codegen) import none of them', () => {
    const layers = ['catalog', 'codegen', 'compat', 'cli', 'scaffold', 'runtime'];
    expect(importsInto('common', [...layers, 'schema'])).toEqual([]);
    expect(importsInto('schema', layers)).toEqual([]);
  });

  it('the delivery core imports no transport, and no transport imports another transport', () => {
    const transports = ['runtime/rabbitmq', 'runtime/kafka', 'runtime/in-process'];
    expect(importsInto('runtime/delivery', transports)).toEqual([]);
    const brokerClients = ['amqplib', 'kafkajs', '@platformatic/kafka'];
    const clientImports = filesUnder(join(root, 'src/runtime/delivery'), ['.ts']).flatMap((file) =>
      importSpecifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => brokerClients.includes(specifier))
        .map((specifier) => `${relative(root, file)} → ${specifier}`),
    );
    expect(clientImports).toEqual([]);
    for (const transport of transports)
      expect(
        importsInto(
          transport,
          transports.filter((other) => other !== transport),
        ),
      ).toEqual([]);
  });

  it('no module of src/ imports itself through others (no import circle)', () => {
    const cycles = importCycles(filesUnder(join(root, 'src'), ['.ts'])).map((cycle) =>
      cycle.map((file) => relative(root, file)).join(' ⇄ '),
    );
    expect(cycles).toEqual([]);
  });

  it('the circle check finds a circle, a self-import and a circle through an index', () => {
    const dir = mkdtempSync(join(tmpdir(), 'evgen-cycles-'));
    try {
      mkdirSync(join(dir, 'sub'));
      const write = (name: string, text: string) => writeFileSync(join(dir, name), text);
      write('a.ts', "import { b } from './b.js';\nexport const a = b;\n");
      write('b.ts', "import type { A } from './sub/index.js';\nexport const b = 1;\n");
      write('sub/index.ts', "export type { A } from '../a.js';\n");
      write('self.ts', "export * from './self.js';\n");
      write('free.ts', "import { a } from './a.js';\nexport const free = a;\n");
      const found = importCycles(filesUnder(dir, ['.ts'])).map((cycle) =>
        cycle.map((file) => relative(dir, file)),
      );
      expect(found).toEqual(
        expect.arrayContaining([['a.ts', 'b.ts', 'sub/index.ts'], ['self.ts']]),
      );
      expect(found).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/runtime does not depend on generator-only packages', () => {
    const generatorOnly = [
      'ts-morph',
      'json-schema-to-typescript',
      'handlebars',
      'commander',
      'prettier',
      'typescript',
    ];
    const offenders = runtimeFiles.flatMap((file) =>
      importSpecifiers(readFileSync(file, 'utf8'))
        .filter((specifier) =>
          generatorOnly.some((name) => specifier === name || specifier.startsWith(`${name}/`)),
        )
        .map((specifier) => `${relative(root, file)} → ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('generated/ imports only evgen-runtime, its own files and ajv run-time helpers', () => {
    const generatedDir = join(root, 'generated');
    const files = filesUnder(generatedDir, ['.ts', '.js']);
    expect(files.length).toBeGreaterThan(5);
    const offenders: string[] = [];
    for (const file of files) {
      for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith('.')) {
          if (relative(generatedDir, resolve(dirname(file), specifier)).startsWith('..'))
            offenders.push(`${relative(root, file)} → ${specifier}`);
          continue;
        }
        const allowed =
          specifier === 'evgen-runtime' ||
          specifier.startsWith('ajv/') ||
          specifier === 'ajv-formats' ||
          specifier.startsWith('ajv-formats/') ||
          specifier.startsWith('node:');
        if (!allowed) offenders.push(`${relative(root, file)} → ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
