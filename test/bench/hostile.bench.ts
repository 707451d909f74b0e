/**
 * Hostile inputs of the security review (each under 1 MB; test/support/hostile-catalogs.ts)
 * through `evgen check`, `evgen build --no-cache` and `evgen diff`, each in a fresh plain-node
 * process from dist/ (build-child.mjs): CPU ms and peak RSS of the process, and its outcome
 * (exit code; the problem code when it stopped at a limit). Goal: ≤ 5 s and ≤ 500 MB each, or a
 * clear problem. Baseline: the same command on a plain one-event catalog in the same run, so the
 * ratio shows what the hostile input costs beyond starting the CLI. A run is stopped after 120 s
 * (reported as such, never hidden).
 *
 *   npm run bench -- hostile              (all seven inputs; EVGEN_BENCH_SMOKE=1: the two smallest)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { issueCases, writeHostileCatalog, type HostileCase } from '../support/hostile-catalogs.js';
import { SMOKE, type BenchResult } from './bench-result.js';

const execFileAsync = promisify(execFile);
const child = fileURLToPath(new URL('./build-child.mjs', import.meta.url));
const repo = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 120_000;

interface Outcome {
  readonly code: number | 'timeout';
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly rssMb: number;
  /** The problem code printed first (schema-too-complex, too-complex, …), if any. */
  readonly problem?: string;
}

async function measure(cwd: string, args: readonly string[]): Promise<Outcome> {
  const started = performance.now();
  const result = await execFileAsync(process.execPath, [child, 'evgen', ...args], {
    cwd,
    timeout: TIMEOUT_MS,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  }).then(
    (done) => ({ code: 0, stdout: done.stdout, stderr: done.stderr, killed: false }),
    (caught: unknown) => {
      const error = caught as { code?: number; stdout?: string; stderr?: string; killed?: boolean };
      return {
        code: error.code ?? 1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
        killed: error.killed === true,
      };
    },
  );
  const wallMs = performance.now() - started;
  if (result.killed) return { code: 'timeout', cpuMs: NaN, wallMs, rssMb: NaN };
  const line = result.stdout
    .split('\n')
    .reverse()
    .find((text) => text.startsWith('BENCH '));
  const measured = line === undefined ? undefined : (JSON.parse(line.slice(6)) as Outcome);
  const problem = /: ([a-z][a-z-]+|[A-Z_]+): /.exec(result.stderr || result.stdout)?.[1];
  return {
    code: measured?.code ?? result.code,
    cpuMs: measured?.cpuMs ?? NaN,
    wallMs: measured?.wallMs ?? wallMs,
    rssMb: measured?.rssMb ?? NaN,
    ...(problem === undefined ? {} : { problem }),
  };
}

function commands(events: string, dir: string): Record<string, string[]> {
  const version = (n: number) => join(events, 'shop', 'Hostile', `v${n}.schema.json`);
  return {
    check: ['check', '--events', events],
    build: ['build', '--events', events, '--out', join(dir, 'generated'), '--no-cache'],
    diff: ['diff', '--mode', 'BACKWARD', version(1), version(2)],
  };
}

const plain: HostileCase = {
  name: 'plain',
  data: (version) => ({ type: version === 1 ? 'string' : 'number' }),
};

export async function run(): Promise<BenchResult[]> {
  await execFileAsync(
    process.execPath,
    [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: repo },
  );
  const baselineDir = mkdtempSync(join(tmpdir(), 'evgen-bench-hostile-plain-'));
  const baseline: Record<string, Outcome> = {};
  try {
    const events = writeHostileCatalog(baselineDir, plain);
    for (const [name, args] of Object.entries(commands(events, baselineDir)))
      baseline[name] = await measure(baselineDir, args);
  } finally {
    rmSync(baselineDir, { recursive: true, force: true });
  }
  const cases = SMOKE
    ? issueCases().filter((hostile) => /chain|depth/.test(hostile.name))
    : issueCases();
  const results: BenchResult[] = [];
  for (const hostile of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'evgen-bench-hostile-'));
    try {
      const events = writeHostileCatalog(dir, hostile);
      const kb = statSync(join(events, 'shop', 'Hostile', 'v1.schema.json')).size / 1024;
      for (const [name, args] of Object.entries(commands(events, dir))) {
        const outcome = await measure(dir, args);
        const base = baseline[name]!;
        const ended =
          outcome.code === 'timeout'
            ? `stopped after ${TIMEOUT_MS / 1000} s`
            : `exit ${outcome.code}${outcome.problem === undefined ? '' : ` ${outcome.problem}`}`;
        const cpuKnown = Number.isFinite(outcome.cpuMs);
        results.push({
          name: `${hostile.name} (${kb.toFixed(0)} KB per version), evgen ${name}, ${cpuKnown ? 'CPU' : 'wall'} ms`,
          unit: 'ms',
          subject: cpuKnown ? outcome.cpuMs : outcome.wallMs,
          baselineName: `same command on a plain one-event catalog`,
          baseline: cpuKnown ? base.cpuMs : base.wallMs,
          note: `${ended}; wall ${(outcome.wallMs / 1000).toFixed(1)} s; peak RSS ${
            Number.isFinite(outcome.rssMb) ? `${outcome.rssMb.toFixed(0)} MB` : 'not reported'
          }`,
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}
