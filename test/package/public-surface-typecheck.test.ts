/**
 * Generated code needs only the public surface of `evgen-runtime`: the declarations of
 * src/runtime/index.ts are emitted as a package would ship them, `evgen-runtime` is mapped to that
 * `index.d.ts` and to nothing else, and generated/ plus every golden catalog's output must compile
 * against it. A template that starts importing an internal name fails here (TS2305), not in a
 * user's build. A control file importing an internal name proves the mapping is the only route.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedDir, goldenCases, listFiles } from '../golden/golden-support.js';
import { REPO_ROOT } from '../support/typecheck.js';

const RUNTIME_INDEX = join(REPO_ROOT, 'src/runtime/index.ts');

function repoOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.json'), (path) =>
    ts.sys.readFile(path),
  );
  if (config.error)
    throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT).options;
}

function format(diagnostics: readonly ts.Diagnostic[]): string[] {
  return diagnostics.map((d) => {
    const at =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const where = d.file ? `${d.file.fileName.replace(REPO_ROOT, '')}:${(at?.line ?? 0) + 1} ` : '';
    return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/** Files of generated/ and of every golden case's expected output that TypeScript compiles. */
function generatedFiles(): string[] {
  const generated = join(REPO_ROOT, 'generated');
  return [
    ...listFiles(generated).map((file) => join(generated, file)),
    ...goldenCases().flatMap((name) =>
      listFiles(expectedDir(name)).map((file) => join(expectedDir(name), file)),
    ),
  ].filter((file) => file.endsWith('.ts'));
}

describe('generated code against the public surface only', () => {
  let declarations: string;
  let options: ts.CompilerOptions;

  beforeAll(async () => {
    declarations = await mkdtemp(join(tmpdir(), 'evgen-public-surface-'));
    const base = repoOptions();
    // The runtime's declarations as the package ships them (dist/index.d.ts and its siblings).
    const emit = ts
      .createProgram([RUNTIME_INDEX], {
        ...base,
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: join(REPO_ROOT, 'src/runtime'),
        outDir: declarations,
        paths: {},
      })
      .emit();
    expect(format(emit.diagnostics)).toEqual([]);
    options = {
      ...base,
      noEmit: true,
      // The package name resolves to the public index and nothing else: no `evgen/runtime`, no
      // sources, no deep paths.
      paths: { 'evgen-runtime': [join(declarations, 'index.d.ts')] },
    };
  }, 120_000);

  afterAll(async () => {
    if (declarations !== undefined) await rm(declarations, { recursive: true, force: true });
  });

  it('generated/ and every golden output compile with evgen-runtime mapped to the public index.d.ts', () => {
    const roots = generatedFiles();
    const program = ts.createProgram(roots, options);
    expect(format(ts.getPreEmitDiagnostics(program))).toEqual([]);
    const files = program.getSourceFiles().map((file) => file.fileName);
    // The golden files were compiled, and the runtime came from the emitted declarations only.
    expect(roots.filter((root) => files.includes(root)).length).toBeGreaterThan(40);
    expect(files).toContain(join(declarations, 'index.d.ts'));
    expect(files.filter((file) => file.startsWith(join(REPO_ROOT, 'src/')))).toEqual([]);
  });

  it('an internal name is not reachable through evgen-runtime (the mapping is the only route)', async () => {
    const control = join(declarations, 'control.mts');
    await writeFile(
      control,
      "import { parseDelivery } from 'evgen-runtime';\nexport const used: unknown = parseDelivery;\n",
    );
    const program = ts.createProgram([control], options);
    const codes = ts.getPreEmitDiagnostics(program).map((d) => d.code);
    // TS2305: Module '"evgen-runtime"' has no exported member 'parseDelivery'.
    expect(codes).toEqual([2305]);
  });
});
