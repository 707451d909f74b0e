/**
 * Type-checks files in-process with the repository's own tsconfig.json (strict, NodeNext,
 * `evgen`, `evgen/runtime` and `evgen-runtime` mapped to the sources), so generated code is held to exactly the
 * rules `npx tsc --noEmit` applies. Returns diagnostics as `file:line message`, paths relative
 * to the repository.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let repoOptions: ts.CompilerOptions | undefined;

function compilerOptions(): ts.CompilerOptions {
  if (repoOptions === undefined) {
    const config = ts.readConfigFile(`${REPO_ROOT}tsconfig.json`, (path) => ts.sys.readFile(path));
    if (config.error)
      throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
    repoOptions = {
      ...ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT).options,
      noEmit: true,
    };
  }
  return repoOptions;
}

/** The program for `files`, for callers that also want to inspect what it contained. */
export function typecheckProgram(files: readonly string[]): {
  program: ts.Program;
  diagnostics: string[];
} {
  const program = ts.createProgram([...files], compilerOptions());
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const file = d.file
      ? `${d.file.fileName.replace(REPO_ROOT, '')}:${(where?.line ?? 0) + 1} `
      : '';
    return `${file}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  return { program, diagnostics };
}

export function typecheck(files: readonly string[]): string[] {
  return typecheckProgram(files).diagnostics;
}
