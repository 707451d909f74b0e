/**
 * The package entry points whose exports are the supported API, and the TypeScript program that
 * reads them: shared by the API report (api-report/*.txt) and the API reference pages.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { REPO } from './packed-install.js';

export const API_ENTRIES = [
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
export function exportedNames(program: ts.Program, source: string): string[] {
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

/** One program over every entry's source, as the compiler sees a service importing them. */
export function apiProgram(): ts.Program {
  return ts.createProgram(
    API_ENTRIES.map((entry) => join(REPO, entry.source)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
  );
}
