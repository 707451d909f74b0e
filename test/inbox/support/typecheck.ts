/**
 * Type-checks generated files in-process with the project's strict settings, `evgen/runtime`
 * resolved to the sources. Returns the diagnostics as `file:line message` strings.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../../', import.meta.url));

export function typecheck(files: readonly string[]): string[] {
  const program = ts.createProgram([...files], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
    baseUrl: root,
    paths: { 'evgen/runtime': ['./src/runtime/index.ts'], evgen: ['./src/index.ts'] },
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const file = d.file ? `${d.file.fileName.replace(root, '')}:${(where?.line ?? 0) + 1} ` : '';
    return `${file}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}
