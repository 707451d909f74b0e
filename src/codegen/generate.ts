/**
 * Runs the selected targets over a catalog and returns (or yields) every output file, checked.
 * Pure: nothing is written here (the CLI's output plan does that). If any target fails, the
 * whole generation fails, so a build never writes a partial set of files.
 */
import type { Catalog, EventVersion } from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { compareStrings } from '../common/json-value.js';
import { contentHash } from '../common/sha256.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { DiagnosticError } from '../diagnostics/diagnostic-error.js';
import { formatTypeScript, MAX_FORMATTED_LENGTH } from './render/format.js';
import { layOutAsPrettier } from './render/prettier-layout.js';
import { commentToken, generatedHeader } from './render/header.js';
import { cacheKey, type GenerationCache } from './generation-cache.js';
import { DEFAULT_RUNTIME_IMPORT } from './runtime-import.js';
import type { GeneratedFile, Target, TargetContext, TargetFile } from './target.js';

export { DEFAULT_RUNTIME_IMPORT };

export interface GenerateOptions {
  /** Names of the targets to run (config `targets`); all given targets when omitted. */
  readonly targetNames?: readonly string[];
  /** Where `targetNames` came from, named as the file of a problem with them (default `targets`). */
  readonly targetSource?: string;
  /** Module specifier generated code imports the runtime from; default `evgen-runtime`. */
  readonly runtimeImport?: string;
  /**
   * Reuse files of earlier runs: event-scoped targets are run per event and only for events
   * whose inputs changed; catalog-scoped targets only when the catalog changed. The cache's keys
   * must already include the generator's version (see the CLI's build cache).
   */
  readonly cache?: GenerationCache;
}

/**
 * Why generation failed, as diagnostics: an unknown target name (`unknown-target`), a selection
 * without a target another one needs (`target-requires`), a target that threw (`target-failed`),
 * an unsafe output path (`invalid-output-path`) or two targets writing one path
 * (`output-path-collision`). `target` names the target at fault, when there is one.
 */
export class GenerateError extends DiagnosticError {
  constructor(
    problem: Diagnostic,
    readonly target?: string,
    options?: { cause?: unknown },
  ) {
    super([problem], options);
    this.name = 'GenerateError';
  }
}

const quoted = (names: readonly string[]) => names.map((name) => JSON.stringify(name)).join(', ');

/**
 * Picks targets by name, in the registry's order. Unknown names are an error listing the known
 * ones; so is a selection that leaves out a target a selected one `requires` (its files would
 * import files that are not generated). `source` names where the names came from in the problem.
 */
export function selectTargets(
  targets: readonly Target[],
  names: readonly string[] | undefined,
  source = 'targets',
): Target[] {
  const known = new Set(targets.map((target) => target.name));
  const unknown = (names ?? []).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new GenerateError({
      file: source,
      pointer: '',
      code: 'unknown-target',
      message: `unknown target${unknown.length > 1 ? 's' : ''} ${quoted(unknown)}; known targets: ${[...known].sort(compareStrings).join(', ') || '(none)'}`,
      hint: 'use the names of known targets',
    });
  }
  const wanted = new Set(names ?? known);
  const selected = targets.filter((target) => wanted.has(target.name));
  for (const target of selected) {
    const missing = (target.requires ?? []).filter((name) => !wanted.has(name));
    if (missing.length === 0) continue;
    const withRequired = requiredClosure(targets, [...wanted]);
    throw new GenerateError(
      {
        file: source,
        pointer: '',
        code: 'target-requires',
        message: `target "${target.name}" needs ${quoted(missing)}, which ${missing.length > 1 ? 'are' : 'is'} not selected: its files import theirs`,
        hint: `select them too, e.g. ${withRequired.join(',')}`,
      },
      target.name,
    );
  }
  return selected;
}

/** `names` and every target they require, transitively, in the registry's order (unknown names last). */
export function requiredClosure(targets: readonly Target[], names: readonly string[]): string[] {
  const byName = new Map(targets.map((target) => [target.name, target]));
  const closed = new Set<string>();
  const visit = (name: string): void => {
    if (closed.has(name)) return;
    closed.add(name);
    for (const required of byName.get(name)?.requires ?? []) visit(required);
  };
  names.forEach(visit);
  const ordered = targets.map((target) => target.name).filter((name) => closed.delete(name));
  return [...ordered, ...closed];
}

/** Every output file, checked and sorted by path (see `generateFiles`). */
export async function generate(
  catalog: Catalog,
  targets: readonly Target[],
  options: GenerateOptions = {},
): Promise<GeneratedFile[]> {
  const files: GeneratedFile[] = [];
  for await (const file of generateFiles(catalog, targets, options)) files.push(file);
  return files.sort((a, b) => compareStrings(a.path, b.path));
}

/**
 * Every output file, yielded as soon as it is finished, so a caller can write it away instead of
 * holding the whole output in memory: catalog-scoped targets on the whole catalog first, then
 * event-scoped targets on the catalog without events and on each event alone (see
 * `Target.scope`), event after event. Files come in no particular order. A file two parts of one
 * event-scoped target both produce is yielded once; two parts that disagree about it are an
 * error rather than a silent choice. Throws as soon as a target fails, so a caller that writes
 * files must discard them then.
 */
export async function* generateFiles(
  catalog: Catalog,
  targets: readonly Target[],
  options: GenerateOptions = {},
): AsyncGenerator<GeneratedFile> {
  const selected = selectTargets(targets, options.targetNames, options.targetSource);
  const root = displayPath(catalog.root);
  const runtimeImport = options.runtimeImport ?? DEFAULT_RUNTIME_IMPORT;
  const full = { catalog, runtimeImport };
  const metadataOnly = { catalog: withoutSchemas(catalog), runtimeImport };
  /** Lower-cased path → the target that produced it (on macOS/Windows case alone collides). */
  const owners = new Map<string, string>();
  /** Path → sha256 of the content an event-scoped target produced in an earlier part. */
  const shared = new Map<string, string>();

  const part = async function* (
    target: Target,
    context: TargetContext,
    /** The cache key of the part's inputs; computed only when there is a cache. */
    key: () => string,
  ): AsyncGenerator<GeneratedFile> {
    let produced: readonly GeneratedFile[];
    try {
      const cache = options.cache;
      const partKey = cache === undefined ? undefined : key();
      const cached = partKey === undefined ? undefined : await cache?.get(partKey);
      if (cached !== undefined) produced = cached;
      else {
        produced = await finishFiles(await target.generate(context));
        if (partKey !== undefined) await cache?.set(partKey, produced);
      }
    } catch (error) {
      throw targetFailed(root, target.name, error);
    }
    const inPart = new Set<string>();
    for (const file of produced) {
      const problem = pathProblem(file.path);
      if (problem !== undefined) {
        throw new GenerateError(
          {
            file: root,
            pointer: '',
            code: 'invalid-output-path',
            message: `target "${target.name}" produced an invalid path ${JSON.stringify(file.path)}: ${problem}`,
            hint: 'targets must produce relative, /-separated paths inside the output folder',
          },
          target.name,
        );
      }
      const lower = file.path.toLowerCase();
      const owner = owners.get(lower);
      if (owner === target.name && !inPart.has(lower) && shared.has(file.path)) {
        if (shared.get(file.path) !== contentHash(file))
          throw targetFailed(
            root,
            target.name,
            new Error(`produced two different versions of ${file.path} for different events`),
          );
        continue;
      }
      if (owner !== undefined) {
        throw new GenerateError(
          {
            file: root,
            pointer: '',
            code: 'output-path-collision',
            message: `targets "${owner}" and "${target.name}" both produce ${file.path}`,
            hint: 'select only one of them, or change one to write another path',
          },
          target.name,
        );
      }
      owners.set(lower, target.name);
      inPart.add(lower);
      if (target.scope === 'event') shared.set(file.path, contentHash(file));
      yield file;
    }
  };

  const contextOf = (target: Target) => (target.readsSchemas === false ? metadataOnly : full);
  const perEvent = selected.filter((target) => target.scope === 'event');
  for (const target of selected) {
    if (target.scope === 'event') continue;
    const context = contextOf(target);
    const { catalog: seen } = context;
    yield* part(target, context, () =>
      cacheKey([
        'catalog',
        target.name,
        runtimeImport,
        JSON.stringify([seen.root, seen.events, seen.consumers]),
      ]),
    );
  }
  // Index -1: the catalog without events (files an event-scoped target writes once).
  for (let index = -1; index < catalog.events.length; index++) {
    // One digest of the event's inputs per context, shared by the targets that see the same
    // context: serializing and hashing a large event once per target was most of the cost of
    // looking up unchanged events in an incremental build.
    const inputDigests = new Map<TargetContext, string>();
    for (const target of perEvent) {
      const context = contextOf(target);
      const events = index < 0 ? [] : [context.catalog.events[index]!];
      const key = () => {
        let digest = inputDigests.get(context);
        if (digest === undefined) {
          digest = cacheKey([JSON.stringify(events)]);
          inputDigests.set(context, digest);
        }
        return cacheKey(['event', target.name, runtimeImport, digest]);
      };
      yield* part(target, { ...context, catalog: { ...context.catalog, events } }, key);
    }
  }
}

function targetFailed(root: string, target: string, error: unknown): GenerateError {
  const reason = error instanceof Error ? error.message : String(error);
  return new GenerateError(
    {
      file: root,
      pointer: '',
      code: 'target-failed',
      message: `target "${target}" failed: ${reason}`,
      hint: 'a bug in the target, or input it does not handle: report it with the catalog that causes it',
    },
    target,
    { cause: error },
  );
}

async function finishFiles(files: readonly TargetFile[]): Promise<GeneratedFile[]> {
  const finished: GeneratedFile[] = [];
  for (const file of files) {
    const problem = pathProblem(file.path);
    // An invalid path is reported by the caller, without formatting anything.
    finished.push({
      path: file.path,
      content: problem === undefined ? await finishFile(file) : '',
    });
  }
  return finished;
}

/** The one place a generated file gets its header and formatting (see TargetFile). */
export async function finishFile(file: TargetFile): Promise<string> {
  const content = `${generatedHeader(file.sources, commentToken(file.path))}\n${file.body}`;
  const format =
    (file.format ?? /\.(ts|js)$/.test(file.path)) && content.length <= MAX_FORMATTED_LENGTH;
  if (!format) return normalizeContent(content);
  const laidOut = file.laidOut === true ? layOutAsPrettier(content) : undefined;
  return normalizeContent(laidOut ?? (await formatTypeScript(content)));
}

/**
 * The catalog as a target that does not read schemas sees it (see `Target.readsSchemas`): each
 * version keeps its number and file, while `schema` and `bundled` become non-enumerable getters
 * that throw. JSON.stringify skips them, so the cache key holds the metadata only, and a target
 * that reads a schema anyway fails loudly instead of being served stale output.
 */
function withoutSchemas(catalog: Catalog): Catalog {
  const refuse = (file: string) => () => {
    throw new Error(`read the schema of ${file} although it declares readsSchemas: false`);
  };
  return {
    ...catalog,
    events: catalog.events.map((event) => ({
      ...event,
      versions: event.versions.map(
        (version) =>
          Object.defineProperties(
            { version: version.version, file: version.file },
            {
              schema: { get: refuse(version.file), enumerable: false },
              bundled: { get: refuse(version.file), enumerable: false },
            },
          ) as EventVersion,
      ),
    })),
  };
}

/** LF line endings and exactly one trailing newline, whatever the target produced. */
export function normalizeContent(content: string): string {
  const lf = content.replace(/\r\n?/g, '\n');
  return lf.endsWith('\n') ? lf.replace(/\n+$/, '\n') : `${lf}\n`;
}

/** Output paths must stay inside the output folder: relative, `/`-separated, no `.`/`..` segments. */
function pathProblem(path: string): string | undefined {
  if (path === '') return 'it is empty';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'it is absolute';
  if (path.includes('\\')) return 'it contains a backslash';
  if (/[\u0000-\u001f]/.test(path)) return 'it contains control characters';
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'it has an empty, "." or ".." segment';
  return undefined;
}
