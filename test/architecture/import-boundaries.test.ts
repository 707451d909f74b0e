/**
 * The package's layering, checked on the real import statements: the runtime (what services
 * ship) never pulls in generator code, and generated code reaches evgen only through
 * `evgen/runtime`.
 */
import { readdirSync, readFileSync } from 'node:fs';
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
