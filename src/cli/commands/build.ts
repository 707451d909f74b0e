/**
 * `evgen build [--events DIR] [--out DIR] [--only TARGETS] [--check] [--config FILE]`: load the catalog, run the
 * targets, and bring the output folder up to date (or, with --check, only say whether it is).
 * A bad catalog prints every problem to stderr, exits 2 and writes nothing.
 */
import { isAbsolute, relative } from 'node:path';
import type { Command } from 'commander';
import { CatalogError } from '../../catalog/catalog-error.js';
import { displayPath } from '../../catalog/read-json-file.js';
import { GenerateError } from '../../codegen/generate.js';
import { DiagnosticError } from '../../diagnostics/diagnostic-error.js';
import { GENERATED_MARKER } from '../../codegen/render/header.js';
import type { Target } from '../../codegen/target.js';
import { openBuildCache } from '../build-cache.js';
import { withBoundedHeapGrowth } from '../bounded-heap-growth.js';
import { addFolderOptions, printProblems, refuse } from '../command-support.js';
import { CONFIG_FILE_NAME, loadConfig, type EvgenConfig } from '../config.js';
import { resolveCatalogDependencies } from '../../catalog/catalog-dependencies.js';
import {
  applyPlan,
  isOutOfDate,
  OutputPlanner,
  outputMatches,
  type OutputPlan,
} from '../output-plan.js';
import { shortDiff } from '../short-diff.js';
import { printed } from '../../diagnostics/printable.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS } from '../exit-codes.js';

export interface BuildOptions {
  readonly events?: string;
  readonly out?: string;
  readonly config?: string;
  readonly check?: boolean;
  /** `--only a,b`: the targets to run, overriding `targets` in the config file. */
  readonly only?: string;
  /** Targets to choose from; the registry's by default (tests pass their own, never cached). */
  readonly targets?: readonly Target[];
  /** `--no-cache`: generate everything, read and write no cache. */
  readonly cache?: boolean;
  /** `--cache-dir DIR`: default a per-user folder outside the checkout (see cache-home.ts). */
  readonly cacheDir?: string;
}

export function registerBuild(program: Command): void {
  addFolderOptions(
    program
      .command('build')
      .description('generate TypeScript from the event catalog into the output folder'),
    {
      out: 'output folder',
    },
  )
    .option(
      '--only <targets>',
      'comma-separated targets to run (default: all, or "targets" in evgen.config.json)',
    )
    .option('--check', 'write nothing; list stale, missing and orphaned files and exit 1 if any')
    .option(
      '--cache-dir <dir>',
      'incremental build cache (default: a private per-user folder, ~/.cache/evgen/build-cache)',
    )
    .option('--no-cache', 'regenerate everything; neither read nor write the cache')
    .action(async (options: BuildOptions) => {
      process.exitCode = await withBoundedHeapGrowth(() => runBuild(options));
    });
}

/** The build itself, returning the exit code; usable without commander. */
export async function runBuild(options: BuildOptions): Promise<number> {
  const started = performance.now();
  let plan: OutputPlan;
  let summary: { events: number; versions: number; files: number };
  try {
    const config = await loadConfig(options);
    assertSeparateFolders(config.events, config.out);
    const targetNames = options.only !== undefined ? parseTargetList(options.only) : config.targets;
    const targetSource =
      options.only !== undefined ? '--only' : displayPath(config.file ?? 'evgen.config.json');
    // Custom targets (tests) are not part of the generator fingerprint: never cache them.
    const cache = options.targets !== undefined ? undefined : await openBuildCache(options, config);
    const settings = {
      targets: targetNames ?? null,
      runtimeImport: config.runtimeImport,
      eventTypeFormat: config.eventTypeFormat,
      // Absent when json, so that a json build keeps the cache key it always had.
      ...(config.wireFormat !== 'json' ? { wireFormat: config.wireFormat } : {}),
      ...(config.catalogs.length > 0
        ? { catalogs: config.catalogs.map(({ name, source }) => [name, source]) }
        : {}),
    };
    const inputs = await cache?.inputsDigest(projectInputFolders(config), settings);
    // Unchanged inputs and an output folder that still holds what the last build wrote: done,
    // without loading the catalog or the generator.
    const manifest = inputs === undefined ? undefined : await cache?.readManifest(config.out);
    if (manifest !== undefined && manifest.inputs === inputs) {
      const current = await outputMatches(config.out, manifest.files);
      if (current.matches)
        return reportUnchanged(options, config.out, current.files, current.foreign, started);
    }
    const [{ loadProjectCatalog }, { generateFiles }, { allTargets }] = await Promise.all([
      import('../project-catalog.js'),
      import('../../codegen/generate.js'),
      import('../../codegen/targets/index.js'),
    ]);
    const compiledSchemas = await cache?.readCompiledSchemas();
    const loadedVersions = await cache?.readLoadedVersions(config.events);
    const { catalog } = await loadProjectCatalog(config, {
      ...(compiledSchemas !== undefined ? { compiledSchemas } : {}),
      ...(loadedVersions !== undefined ? { loadedVersions } : {}),
    });
    if (compiledSchemas !== undefined) await cache?.writeCompiledSchemas(compiledSchemas);
    if (loadedVersions !== undefined)
      await cache?.writeLoadedVersions(config.events, loadedVersions);
    // Each file is compared (and, for a build, staged) as soon as it is generated: memory holds
    // paths and hashes, not the output.
    const planner = await OutputPlanner.open(config.out, { stage: options.check !== true });
    try {
      const files = generateFiles(catalog, options.targets ?? allTargets, {
        ...(targetNames !== undefined ? { targetNames, targetSource } : {}),
        runtimeImport: config.runtimeImport,
        ...(cache !== undefined ? { cache } : {}),
      });
      for await (const file of files) await planner.add(file);
      plan = await planner.finish();
    } catch (error) {
      await planner.discard();
      throw error;
    }
    if (cache !== undefined && inputs !== undefined)
      await cache.writeManifest(config.out, inputs, plan.hashes);
    summary = {
      events: catalog.events.length,
      versions: catalog.events.reduce((sum, event) => sum + event.versions.length, 0),
      files: Object.keys(plan.hashes).length,
    };
  } catch (thrown) {
    // A target that finds a catalog problem (e.g. two schemas claiming one type name) reports it
    // like the loader does: file#pointer, hint, count.
    // Generator errors and output conflicts are diagnostics too: one format, codes printed.
    const error =
      thrown instanceof GenerateError && thrown.cause instanceof CatalogError
        ? thrown.cause
        : thrown;
    if (!(error instanceof DiagnosticError)) throw error;
    printProblems(error);
    process.stderr.write(
      `evgen: ${error.problems.length} problem${error.problems.length === 1 ? '' : 's'} found; nothing was written\n`,
    );
    return EXIT_BAD_INPUT;
  }

  const out = displayPath(plan.outDir);
  warnForeign(out, plan.foreign);
  if (options.check === true) return reportCheck(plan, out);

  await applyPlan(plan);
  const elapsed = Math.round(performance.now() - started);
  process.stdout.write(
    printed`evgen: ${summary.events} events, ${summary.versions} versions → ${summary.files} files in ${out || '.'}: ` +
      `${plan.writes.length} written, ${plan.unchanged.length} unchanged, ${plan.removals.length} removed (${elapsed} ms)\n`,
  );
  return 0;
}

/** Files in the output folder without the generated-file marker: never touched, said once each. */
function warnForeign(out: string, foreign: readonly string[]): void {
  for (const path of foreign) {
    process.stderr.write(
      printed`warning: ${out}/${path} is not generated by evgen (no "${GENERATED_MARKER}" header); left alone` +
        '\n',
    );
  }
}

/** The events folders a build reads: its own, then each dependency's (the cache key's inputs). */
function projectInputFolders(config: EvgenConfig): string[] {
  if (config.catalogs.length === 0) return [config.events];
  const found = resolveCatalogDependencies(
    config.catalogs,
    displayPath(config.file ?? CONFIG_FILE_NAME),
  );
  return [config.events, ...found.map((dependency) => dependency.eventsDir)];
}

/** The output folder is what the last build of the same inputs wrote. */
function reportUnchanged(
  options: BuildOptions,
  outDir: string,
  files: number,
  foreign: readonly string[],
  started: number,
): number {
  const out = displayPath(outDir);
  warnForeign(out, foreign);
  const prefix = out === '' ? '' : `${out}/`;
  if (options.check === true) {
    process.stdout.write(printed`evgen: ${prefix || './'} is up to date (${files} files)` + '\n');
    return 0;
  }
  const elapsed = Math.round(performance.now() - started);
  process.stdout.write(
    printed`evgen: inputs unchanged → ${files} files in ${out || '.'}: 0 written, ${files} unchanged, 0 removed (${elapsed} ms)` +
      '\n',
  );
  return 0;
}

function reportCheck(plan: OutputPlan, out: string): number {
  const prefix = out === '' ? '' : `${out}/`;
  if (!isOutOfDate(plan)) {
    process.stdout.write(
      printed`evgen: ${prefix || './'} is up to date (${plan.unchanged.length} files)` + '\n',
    );
    return 0;
  }
  // Paths and file contents come from the pull request: every line through printed/shortDiff.
  const lines: string[] = [];
  for (const write of plan.writes) {
    lines.push(printed`${write.reason}: ${prefix}${write.path}`);
    if (write.current !== undefined && write.content !== undefined)
      lines.push(indent(shortDiff(write.current, write.content, `${prefix}${write.path}`)));
  }
  for (const path of plan.removals) lines.push(printed`orphaned: ${prefix}${path}`);
  const stale = plan.writes.filter((write) => write.reason === 'stale').length;
  const missing = plan.writes.length - stale;
  lines.push(
    printed`evgen: ${prefix || './'} is out of date (${stale} stale, ${missing} missing, ${plan.removals.length} orphaned); run \`evgen build\``,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return EXIT_FINDINGS;
}

/**
 * The output folder must not be, contain, or sit inside the events folder: orphan removal scans the
 * whole output folder, and generated files must never be read back as catalog input.
 */
function assertSeparateFolders(events: string, out: string): void {
  const inside = (child: string, parent: string) => {
    const path = relative(parent, child);
    return path === '' || (!path.startsWith('..') && !isAbsolute(path));
  };
  if (inside(events, out) || inside(out, events)) {
    throw refuse({
      code: 'output-overlaps-events',
      file: displayPath(out),
      message: `the output folder overlaps the events folder ${displayPath(events)}`,
      hint: 'use a separate output folder, e.g. --out generated',
    });
  }
}

/** `--only a,b` → ['a', 'b']; an empty list would remove every generated file, so it is refused. */
function parseTargetList(list: string): string[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) {
    throw refuse({
      code: 'invalid-option',
      file: '--only',
      message: 'names no target',
      hint: 'e.g. --only types,validators,envelopes,index',
    });
  }
  return names;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
