/**
 * The supported surface of the package entries, `evgen` (src/index.ts), `evgen/runtime` /
 * `evgen-runtime` (src/runtime/index.ts) and the data-layer adapters (`evgen-runtime/kysely`, …), pinned in committed lists (api-report/*.txt: one
 * exported name a line with whether it is a value or only a type). Adding, removing or turning a
 * value into a type fails here until the list is rewritten on purpose:
 *
 *   EVGEN_UPDATE=1 npx vitest run test/package/api-report.test.ts   (then review the diff)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { UPDATE_EXPECTED } from '../support/update-expected.js';
import { REPO } from './packed-install.js';

const ENTRIES = [
  { name: 'evgen', source: 'src/index.ts', report: 'api-report/evgen.txt' },
  { name: 'evgen-runtime', source: 'src/runtime/index.ts', report: 'api-report/evgen-runtime.txt' },
  {
    name: 'evgen-runtime/kysely',
    source: 'src/runtime/kysely.ts',
    report: 'api-report/evgen-runtime-kysely.txt',
  },
  {
    name: 'evgen-runtime/knex',
    source: 'src/runtime/knex.ts',
    report: 'api-report/evgen-runtime-knex.txt',
  },
  {
    name: 'evgen-runtime/drizzle',
    source: 'src/runtime/drizzle.ts',
    report: 'api-report/evgen-runtime-drizzle.txt',
  },
  {
    name: 'evgen-runtime/typeorm',
    source: 'src/runtime/typeorm.ts',
    report: 'api-report/evgen-runtime-typeorm.txt',
  },
  {
    name: 'evgen-runtime/prisma',
    source: 'src/runtime/prisma.ts',
    report: 'api-report/evgen-runtime-prisma.txt',
  },
] as const;

/** `name<TAB>value|type`, sorted, for every name the entry exports (re-exports followed). */
function exportedNames(program: ts.Program, source: string): string[] {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(join(REPO, source));
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`${source}: not part of the program`);
  return checker
    .getExportsOfModule(module)
    .map((symbol) => {
      const target =
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return `${symbol.name}\t${target.flags & ts.SymbolFlags.Value ? 'value' : 'type'}`;
    })
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function reportText(entry: (typeof ENTRIES)[number], names: readonly string[]): string {
  return [
    `# Public API of ${entry.name} (${entry.source}): ${names.length} names.`,
    '# Checked by test/package/api-report.test.ts; rewrite with EVGEN_UPDATE=1 and review the diff.',
    ...names,
    '',
  ].join('\n');
}

describe('public API report', () => {
  const program = ts.createProgram(
    ENTRIES.map((entry) => join(REPO, entry.source)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
  );

  it.each(ENTRIES)('$name exports exactly the names in $report', async (entry) => {
    const actual = reportText(entry, exportedNames(program, entry.source));
    const path = join(REPO, entry.report);
    if (UPDATE_EXPECTED) await writeFile(path, actual);
    const expected = await readFile(path, 'utf8').catch(() => '');
    expect(
      actual,
      `${entry.report} differs from what ${entry.source} exports: if the change is deliberate, run EVGEN_UPDATE=1 npx vitest run test/package/api-report.test.ts`,
    ).toBe(expected);
  });

  it('docs/reference/runtime.md lists every name of evgen-runtime, one line each, and nothing else', async () => {
    const readme = await readFile(join(REPO, 'docs/reference/runtime.md'), 'utf8');
    const start = readme.indexOf('## `evgen-runtime`: every exported name');
    expect(start, 'section "## `evgen-runtime`: every exported name"').toBeGreaterThan(0);
    const end = readme.indexOf('\n#', start + 1);
    const listed = [...readme.slice(start, end).matchAll(/^- `([^`]+)` — \S/gm)].map((m) => m[1]!);
    const exported = exportedNames(program, 'src/runtime/index.ts').map(
      (line) => line.split('\t')[0]!,
    );
    expect([...listed].sort()).toEqual(exported);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
