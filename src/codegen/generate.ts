/**
 * Runs the selected targets over a catalog and returns every output file, checked and sorted.
 * Pure: nothing is written here (the CLI's output plan does that). If any target fails, the
 * whole generation fails, so a build never writes a partial set of files.
 */
import type { Catalog } from '../catalog/model.js';
import { compareStrings } from '../common/json-value.js';
import { formatTypeScript } from './render/format.js';
import { commentToken, generatedHeader } from './render/header.js';
import { cacheKey, type GenerationCache } from './generation-cache.js';
import { DEFAULT_RUNTIME_IMPORT } from './runtime-import.js';
import type { GeneratedFile, Target, TargetContext, TargetFile } from './target.js';

export { DEFAULT_RUNTIME_IMPORT };

export interface GenerateOptions {
  /** Names of the targets to run (config `targets`); all given targets when omitted. */
  readonly targetNames?: readonly string[];
  /** Module specifier generated code imports the runtime from; default `evgen-runtime`. */
  readonly runtimeImport?: string;
  /**
   * Reuse files of earlier runs: event-scoped targets are run per event and only for events
   * whose inputs changed; catalog-scoped targets only when the catalog changed. The cache's keys
   * must already include the generator's version (see the CLI's build cache).
   */
  readonly cache?: GenerationCache;
}

/** Why generation failed: an unknown target name, a target that threw, or bad/colliding paths. */
export class GenerateError extends Error {
  constructor(
    message: string,
    readonly target?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GenerateError';
  }
}

/** Picks targets by name, in the registry's order; unknown names are an error listing the known ones. */
export function selectTargets(
  targets: readonly Target[],
  names: readonly string[] | undefined,
): Target[] {
  if (names === undefined) return [...targets];
  const known = new Set(targets.map((target) => target.name));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new GenerateError(
      `unknown target${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => JSON.stringify(name)).join(', ')}; known targets: ${[...known].sort().join(', ') || '(none)'}`,
    );
  }
  const wanted = new Set(names);
  return targets.filter((target) => wanted.has(target.name));
}

export async function generate(
  catalog: Catalog,
  targets: readonly Target[],
  options: GenerateOptions = {},
): Promise<GeneratedFile[]> {
  const selected = selectTargets(targets, options.targetNames);
  const context = { catalog, runtimeImport: options.runtimeImport ?? DEFAULT_RUNTIME_IMPORT };
  const owners = new Map<string, string>();
  const files: GeneratedFile[] = [];
  for (const target of selected) {
    let produced: readonly GeneratedFile[];
    try {
      produced =
        options.cache === undefined
          ? await finishFiles(await target.generate(context))
          : await generateCached(target, context, options.cache);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new GenerateError(`target "${target.name}" failed: ${reason}`, target.name, {
        cause: error,
      });
    }
    for (const file of produced) {
      const problem = pathProblem(file.path);
      if (problem !== undefined) {
        throw new GenerateError(
          `target "${target.name}" produced an invalid path ${JSON.stringify(file.path)}: ${problem}`,
          target.name,
        );
      }
      const owner = owners.get(file.path.toLowerCase());
      if (owner !== undefined) {
        // Compared case-insensitively: on macOS/Windows two such files would overwrite each other.
        throw new GenerateError(
          `targets "${owner}" and "${target.name}" both produce ${file.path}`,
          target.name,
        );
      }
      owners.set(file.path.toLowerCase(), target.name);
      files.push(file);
    }
  }
  return files.sort((a, b) => compareStrings(a.path, b.path));
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
  const format = file.format ?? /\.(ts|js)$/.test(file.path);
  return normalizeContent(format ? await formatTypeScript(content) : content);
}

/**
 * A target's files through the cache. An event-scoped target runs on the catalog without events
 * and on each event alone (see `Target.scope`); the parts are merged by path, and two parts that
 * disagree about one path are an error rather than a silent choice.
 */
async function generateCached(
  target: Target,
  context: TargetContext,
  cache: GenerationCache,
): Promise<GeneratedFile[]> {
  const run = async (catalog: Catalog, key: string): Promise<readonly GeneratedFile[]> => {
    const cached = await cache.get(key);
    if (cached !== undefined) return cached;
    const produced = await finishFiles(await target.generate({ ...context, catalog }));
    await cache.set(key, produced);
    return produced;
  };
  const { catalog, runtimeImport } = context;
  if (target.scope !== 'event') {
    const inputs = JSON.stringify([catalog.root, catalog.events, catalog.consumers]);
    return [...(await run(catalog, cacheKey(['catalog', target.name, runtimeImport, inputs])))];
  }
  const parts = [[], ...catalog.events.map((event) => [event])];
  const byPath = new Map<string, string>();
  for (const events of parts) {
    const key = cacheKey(['event', target.name, runtimeImport, JSON.stringify(events)]);
    for (const file of await run({ ...catalog, events }, key)) {
      const previous = byPath.get(file.path);
      if (previous !== undefined && previous !== file.content)
        throw new Error(`produced two different versions of ${file.path} for different events`);
      byPath.set(file.path, file.content);
    }
  }
  return [...byPath].map(([path, content]) => ({ path, content }));
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
