/**
 * Code generation at catalog scale, each run in a fresh process (CPU time of the process,
 * median of SAMPLES runs, spread printed) on synthetic catalogs (test/support/synthetic-catalog):
 *
 * - cold `evgen build --no-cache` vs json-schema-to-typescript + ajv standalone of the same
 *   version schemas in a plain script (goal ≤ 1.5×), with ms per event and peak memory;
 * - no-op `evgen build` and `build --check` with a warm cache (goal ≤ 1 s wall at 100 events),
 *   and one event changed (goal ≤ 10 % of cold), both against the cold build;
 * - bytes of generated/ per event and of validators.js per version (goals 60 KB, 25 KB).
 *
 * Sizes: EVGEN_BENCH_SIZES (default 10,100; 500 and 1000 take minutes per sample).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { writeSyntheticCatalog } from '../support/synthetic-catalog.js';
import { fromSamples, median, SAMPLES, SMOKE, type BenchResult } from './bench-result.js';

const execFileAsync = promisify(execFile);
const child = fileURLToPath(new URL('./build-child.mjs', import.meta.url));
const repo = fileURLToPath(new URL('../../', import.meta.url));

export const SIZES = SMOKE
  ? [3]
  : (process.env.EVGEN_BENCH_SIZES ?? '10,100').split(',').map((size) => Number(size.trim()));

interface Run {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly rssMb: number;
}

export async function timed(args: readonly string[]): Promise<Run> {
  // Plain node, as users run evgen from dist/: the child is JavaScript, and the bench runner's
  // TypeScript loader (tsx, through NODE_OPTIONS) would add its own start-up to every sample.
  const { stdout } = await execFileAsync(process.execPath, [child, ...args], {
    cwd: repo,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  }).catch((caught: unknown) => {
    const error = caught as { code?: number; stdout?: string; stderr?: string };
    // `build --check` on a stale folder exits 1 and still reports its measurement.
    if (error.code === 1 && error.stdout !== undefined) return { stdout: error.stdout };
    throw new Error(`${args.join(' ')} failed: ${error.stderr ?? String(caught)}`);
  });
  const line = stdout
    .split('\n')
    .reverse()
    .find((text) => text.startsWith('BENCH '));
  if (line === undefined) throw new Error(`no measurement from ${args.join(' ')}`);
  return JSON.parse(line.slice('BENCH '.length)) as Run;
}

async function samples(args: () => readonly string[], before?: () => void): Promise<Run[]> {
  const runs: Run[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    before?.();
    runs.push(await timed(args()));
  }
  return runs;
}

function folderBytes(dir: string, filter: (name: string) => boolean = () => true): number[] {
  const sizes: number[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(sub, { withFileTypes: true })) {
      const path = join(sub, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (filter(entry.name)) sizes.push(statSync(path).size);
    }
  };
  walk(dir);
  return sizes;
}

const cpu = (runs: readonly Run[]) => runs.map((sample) => sample.cpuMs);
const wall = (runs: readonly Run[]) => runs.map((sample) => sample.wallMs);

export async function run(): Promise<BenchResult[]> {
  // The CLI is measured as users run it: compiled, from dist/ (brought up to date first).
  await execFileAsync(
    process.execPath,
    [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: repo },
  );
  const results: BenchResult[] = [];
  // CLI start: `evgen --version` against a bare node process doing nothing (same child script).
  const version = await samples(() => ['evgen', '--version']);
  const bare = await samples(() => ['bare']);
  results.push(
    fromSamples(
      {
        name: 'evgen --version, CPU ms',
        unit: 'ms',
        baselineName: 'goal 150 ms',
        goal: { ratio: 1, better: 'lower' },
        note: `bare node in the same child script: ${Math.round(median(cpu(bare)))} ms CPU, so evgen's own share is ${Math.round(median(cpu(version)) - median(cpu(bare)))} ms`,
      },
      cpu(version),
      version.map(() => 150),
    ),
  );
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), `evgen-bench-build-${size}-`));
    try {
      const events = join(dir, 'events');
      const names = writeSyntheticCatalog(events, { events: size });
      const versions = folderBytes(events, (name) => /^v\d+\.schema\.json$/.test(name)).length;
      const out = join(dir, 'generated');
      const cache = join(dir, 'cache');
      const build = ['evgen', 'build', '--events', events, '--out', out];
      const cold = await samples(
        () => [...build, '--no-cache'],
        () => rmSync(out, { recursive: true, force: true }),
      );
      const baseline = await samples(
        () => ['baseline', events, join(dir, 'baseline')],
        () => rmSync(join(dir, 'baseline'), { recursive: true, force: true }),
      );
      const perEvent = (runs: readonly Run[]) => cpu(runs).map((ms) => ms / size);
      results.push(
        fromSamples(
          {
            name: `cold evgen build, ${size} events (${versions} versions), CPU ms per event`,
            unit: 'ms/event',
            baselineName: 'json-schema-to-typescript + ajv standalone, same schemas',
            goal: { ratio: 1.5, better: 'lower' },
            note: `peak RSS ${Math.max(...cold.map((r) => r.rssMb)).toFixed(0)} MB vs ${Math.max(...baseline.map((r) => r.rssMb)).toFixed(0)} MB; wall ${(wall(cold).reduce((a, b) => a + b) / cold.length / 1000).toFixed(1)} s`,
          },
          perEvent(cold),
          perEvent(baseline),
        ),
      );
      // Peak memory of the same cold runs (goal: flat in the number of events; compare sizes).
      results.push(
        fromSamples(
          {
            name: `peak RSS, cold evgen build, ${size} events, MB`,
            unit: 'MB',
            baselineName: 'json-schema-to-typescript + ajv standalone, same schemas',
            note: 'goal: at most 300 MB at 1000 events (`evgen build` bounds V8 heap growth)',
          },
          cold.map((r) => r.rssMb),
          baseline.map((r) => r.rssMb),
        ),
      );
      // Output size.
      const bytes = folderBytes(out).reduce((a, b) => a + b, 0);
      const validatorBytes = folderBytes(out, (name) => name === 'validators.js').reduce(
        (a, b) => a + b,
        0,
      );
      results.push({
        name: `generated/ size, ${size} events`,
        unit: 'KB/event',
        subject: bytes / 1024 / size,
        baselineName: 'goal',
        baseline: 60,
        goal: { ratio: 1, better: 'lower' },
      });
      results.push({
        name: `validators.js size, ${size} events`,
        unit: 'KB/version',
        subject: validatorBytes / 1024 / versions,
        baselineName: 'goal',
        baseline: 25,
        goal: { ratio: 1, better: 'lower' },
        note: 'writer + reader validator of one version',
      });
      // Warm the cache, then no-op build and build --check.
      await timed([...build, '--cache-dir', cache]);
      const noop = await samples(() => [...build, '--cache-dir', cache]);
      const check = await samples(() => [...build, '--cache-dir', cache, '--check']);
      for (const [label, runs] of [
        ['no-op evgen build (inputs unchanged)', noop],
        ['evgen build --check (inputs unchanged)', check],
      ] as const) {
        results.push(
          fromSamples(
            {
              name: `${label}, ${size} events, wall ms`,
              unit: 'ms',
              baselineName: 'goal 1000 ms',
              goal: { ratio: 1, better: 'lower' },
              note: `CPU ${Math.round(cpu(runs)[0]!)} ms; ${(wall(runs)[0]! / size).toFixed(1)} ms per event`,
            },
            wall(runs),
            runs.map(() => 1000),
          ),
        );
      }
      // One event changed per sample (a new optional property in its latest version).
      let edit = 0;
      const changed = await samples(
        () => [...build, '--cache-dir', cache],
        () => {
          const { domain, name } = names[edit % names.length]!;
          const folder = join(events, domain, name);
          const latest = readdirSync(folder)
            .filter((file) => /^v\d+\.schema\.json$/.test(file))
            .sort()
            .pop()!;
          const schema = JSON.parse(readFileSync(join(folder, latest), 'utf8')) as {
            properties: Record<string, unknown>;
          };
          schema.properties[`benchEdit${edit++}`] = { type: 'string' };
          writeFileSync(join(folder, latest), JSON.stringify(schema, null, 2));
        },
      );
      results.push(
        fromSamples(
          {
            name: `one event changed, ${size} events, CPU ms`,
            unit: 'ms',
            baselineName: 'cold build',
            goal: { ratio: 0.1, better: 'lower' },
            note: `${(cpu(changed)[0]! / size).toFixed(1)} ms per event`,
          },
          cpu(changed),
          cpu(cold),
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}
