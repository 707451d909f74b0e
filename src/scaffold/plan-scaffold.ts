/**
 * `evgen scaffold` as a pure function: from the catalog and the files already in the handlers
 * folder, the files to create and the files to extend. A user's file is never rewritten: missing
 * handler/upcaster stubs are inserted as whole new lines (an import after the last import, the
 * stub at the end), located with ts-morph, so every line the user wrote stays byte-identical.
 */
import { Project, type SourceFile } from 'ts-morph';
import type { Catalog, ConsumerDefinition } from '../catalog/model.js';
import { formatTypeScript } from '../codegen/render/index.js';
import { subscribedEvents } from '../codegen/targets/consumers.js';
import {
  consumerNames,
  generatedConsumerImport,
  handlerFilePath,
  handlerFunctionName,
  upcasterFilePath,
  upcasterFunctionName,
  wiringFilePath,
} from './stub-names.js';
import {
  handlerFileDoc,
  handlerStub,
  runtimeValueImport,
  typeImport,
  upcasterFileDoc,
  upcasterStub,
  wiringSource,
  type WiringEntry,
} from './stub-source.js';
import { compareStrings } from '../common/json-value.js';

export interface ScaffoldOptions {
  /** Handlers folder and generated folder, relative to one common base; used for import paths. */
  readonly handlersDir: string;
  readonly generatedDir: string;
  /** Module specifier of the runtime, normally `evgen-runtime`. */
  readonly runtimeImport: string;
  /** Current content of a file in the handlers folder (path relative to it), or undefined. */
  readonly readFile: (path: string) => string | undefined | Promise<string | undefined>;
}

export interface ScaffoldChange {
  /** Relative to the handlers folder, `/`-separated. */
  readonly path: string;
  readonly action: 'create' | 'extend';
  /** The whole new content of the file. */
  readonly content: string;
  /** Names of the handlers/upcasters this change adds. */
  readonly added: readonly string[];
}

export interface ScaffoldPlan {
  /** Sorted by path. */
  readonly changes: readonly ScaffoldChange[];
  /** What the user still has to do by hand, e.g. wire a new stub into an existing index.ts. */
  readonly notes: readonly string[];
}

interface Stub {
  readonly name: string;
  /** Names of the generated types the stub needs. */
  readonly types: readonly string[];
  readonly source: string;
}

export async function planScaffold(
  catalog: Catalog,
  options: ScaffoldOptions,
): Promise<ScaffoldPlan> {
  const project = new Project({ useInMemoryFileSystem: true, skipLoadingLibFiles: true });
  const changes: ScaffoldChange[] = [];
  const notes: string[] = [];
  for (const consumer of catalog.consumers) {
    const events = subscribedEvents(catalog, consumer);
    const wiring: WiringEntry[] = [];
    const added: string[] = [];
    for (const event of events) {
      const handlerPath = handlerFilePath(consumer, event);
      const upcasterPath = upcasterFilePath(consumer, event);
      wiring.push({
        event,
        handlerModule: `./${relativeModule(wiringFilePath(consumer), handlerPath)}`,
        upcasterModule: `./${relativeModule(wiringFilePath(consumer), upcasterPath)}`,
      });
      const latest = event.versions[event.versions.length - 1]!.version;
      const handler = await ensureStubs(
        project,
        options,
        consumer,
        handlerPath,
        handlerFileDoc(consumer, event),
        [
          {
            name: handlerFunctionName(event, latest),
            types: [consumerNames(consumer).handlerType(event, latest)],
            source: handlerStub(consumer, event, latest),
          },
        ],
      );
      const steps = event.versions.slice(0, -1).map(({ version }) => version);
      const upcasters =
        steps.length === 0
          ? undefined
          : await ensureStubs(
              project,
              options,
              consumer,
              upcasterPath,
              upcasterFileDoc(consumer, event),
              steps.map((from) => ({
                name: upcasterFunctionName(event, from),
                types: [consumerNames(consumer).upcasterType(event, from)],
                source: upcasterStub(consumer, event, from),
              })),
            );
      for (const change of [handler, upcasters]) {
        if (change === undefined) continue;
        changes.push(change);
        added.push(...change.added.map((name) => `${name} (${change.path})`));
      }
    }
    const wiringPath = wiringFilePath(consumer);
    if ((await options.readFile(wiringPath)) === undefined) {
      const generated = generatedConsumerImport(
        consumer,
        wiringPath,
        options.handlersDir,
        options.generatedDir,
      );
      changes.push({
        path: wiringPath,
        action: 'create',
        content: await formatTypeScript(wiringSource(consumer, wiring, generated)),
        added: ['handlers', 'upcasters'],
      });
    } else if (added.length > 0) {
      notes.push(`${consumer.name}: wire the new stubs into ${wiringPath}: ${added.join(', ')}`);
    }
  }
  changes.sort((a, b) => compareStrings(a.path, b.path));
  return { changes, notes };
}

function relativeModule(fromFile: string, toFile: string): string {
  const fromDir = fromFile.split('/').slice(0, -1).join('/');
  const rest =
    fromDir === ''
      ? toFile
      : toFile.startsWith(`${fromDir}/`)
        ? toFile.slice(fromDir.length + 1)
        : toFile;
  return rest.replace(/\.ts$/, '.js');
}

/** Creates `path` with every stub, or adds the missing stubs to the user's file; undefined when nothing is missing. */
async function ensureStubs(
  project: Project,
  options: ScaffoldOptions,
  consumer: ConsumerDefinition,
  path: string,
  fileDoc: string,
  stubs: readonly Stub[],
): Promise<ScaffoldChange | undefined> {
  const generated = generatedConsumerImport(
    consumer,
    path,
    options.handlersDir,
    options.generatedDir,
  );
  const existing = await options.readFile(path);
  if (existing === undefined) {
    const source = [
      fileDoc,
      runtimeValueImport(options.runtimeImport),
      typeImport(
        stubs.flatMap((stub) => stub.types),
        generated,
      ),
      '',
      ...stubs.map((stub) => `${stub.source}\n`),
    ].join('\n');
    return {
      path,
      action: 'create',
      content: await formatTypeScript(source),
      added: stubs.map((stub) => stub.name),
    };
  }
  const file = project.createSourceFile(`/scaffold/${path}`, existing, { overwrite: true });
  const missing = stubs.filter((stub) => !declares(file, stub.name));
  if (missing.length === 0) return undefined;
  const imported = importedNames(file);
  const newImports: string[] = [];
  if (!imported.has('NonRetryableError'))
    newImports.push(runtimeValueImport(options.runtimeImport));
  const types = missing.flatMap((stub) => stub.types).filter((type) => !imported.has(type));
  if (types.length > 0) newImports.push(typeImport(types, generated));
  const appended = (
    await formatTypeScript(missing.map((stub) => stub.source).join('\n\n'))
  ).trimEnd();
  const content = insertLines(existing, lastImportEnd(file), newImports, appended);
  return { path, action: 'extend', content, added: missing.map((stub) => stub.name) };
}

/** Whether the file declares `name` at top level (const, let, function, class), exported or not. */
function declares(file: SourceFile, name: string): boolean {
  return (
    file.getVariableDeclaration(name) !== undefined ||
    file.getFunction(name) !== undefined ||
    file.getClass(name) !== undefined ||
    file.getExportedDeclarations().has(name)
  );
}

function importedNames(file: SourceFile): Set<string> {
  const names = new Set<string>();
  for (const declaration of file.getImportDeclarations()) {
    for (const named of declaration.getNamedImports())
      names.add(named.getAliasNode()?.getText() ?? named.getName());
  }
  return names;
}

/** Offset just after the last import declaration's line, or 0 when the file has no imports. */
function lastImportEnd(file: SourceFile): number {
  const imports = file.getImportDeclarations();
  const last = imports[imports.length - 1];
  if (last === undefined) return 0;
  const text = file.getFullText();
  const newline = text.indexOf('\n', last.getEnd());
  return newline === -1 ? text.length : newline + 1;
}

/**
 * Inserts whole lines into `text`: `importLines` at offset `at` (a line start) and `appended`
 * after the last line, separated by a blank line. Nothing already in `text` changes.
 */
function insertLines(
  text: string,
  at: number,
  importLines: readonly string[],
  appended: string,
): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const withEol = (lines: string) => lines.replace(/\n/g, eol);
  let head = text.slice(0, at);
  let tail = text.slice(at);
  if (importLines.length > 0) {
    // A file whose last import ends without a newline (last line of the file) gets one first.
    if (head.length > 0 && !head.endsWith('\n')) head += eol;
    head += withEol(importLines.join('\n')) + eol;
  }
  if (tail.length > 0 && !tail.endsWith('\n')) tail += eol;
  const separator = tail.length === 0 && head.length === 0 ? '' : eol;
  return `${head}${tail}${separator}${withEol(appended)}${eol}`;
}
