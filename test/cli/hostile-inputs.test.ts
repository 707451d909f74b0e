/**
 * The hostile inputs of the security review (each under 1 MB) through every command that reads
 * them: `check` (loads the catalog, then compares), `build` (loads, then generates) and `diff`
 * (compares two files). Each ends with a verdict, generated code, or a located problem and exit
 * 2 — never a stack trace, a "Maximum call stack size exceeded" or half-written output. Time and
 * peak memory are measured by test/bench/hostile.bench.ts, not asserted here.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  anyOfTreeCase,
  bigEnumCase,
  refChainCase,
  refRingCase,
  unionCase,
  writeHostileCatalog,
  type HostileCase,
} from '../support/hostile-catalogs.js';
import { evgen, type CliResult } from '../compat/support/cli-run.js';

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Run {
  readonly check: CliResult;
  readonly build: CliResult;
  readonly diff: CliResult;
  /** Whether build left an output folder behind. */
  readonly built: boolean;
  readonly out: string;
}

async function runAll(hostile: HostileCase): Promise<Run> {
  dir = mkdtempSync(join(tmpdir(), 'evgen-hostile-'));
  const events = writeHostileCatalog(dir, hostile);
  const out = join(dir, 'generated');
  const version = (n: number) => join(events, 'shop', 'Hostile', `v${n}.schema.json`);
  const run: Run = {
    check: await evgen('check', '--events', events),
    build: await evgen('build', '--events', events, '--out', out, '--no-cache'),
    diff: await evgen('diff', '--mode', 'BACKWARD', version(1), version(2)),
    built: false,
    out,
  };
  return { ...run, built: existsSync(out) };
}

function expectNoCrash(run: Run): void {
  for (const result of [run.check, run.build, run.diff]) {
    expect(result.stderr).not.toMatch(/Maximum call stack|RangeError|\n\s+at /);
  }
}

/** check and build stop in the loader with this problem (in both version files), nothing written. */
function expectLoaderRefusal(run: Run, location: RegExp, message: RegExp): void {
  for (const result of [run.check, run.build]) {
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(location);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('schema-too-complex');
  }
  expect(run.built).toBe(false);
}

describe('hostile inputs through check, build and diff', () => {
  it.each(
    [unionCase('anyOf', 400), unionCase('anyOf', 1000), unionCase('oneOf', 1000)].map(
      (hostile) => [hostile.name, hostile, hostile.name.slice(0, 5)] as const,
    ),
  )(
    '%s: too many branches for the loader; diff compares or stops located',
    async (_name, hostile, keyword) => {
      const run = await runAll(hostile);
      expectNoCrash(run);
      expectLoaderRefusal(
        run,
        new RegExp(
          `shop/Hostile/v1\\.schema\\.json#/properties/data/${keyword}: schema-too-complex`,
        ),
        new RegExp(`\\d+ branches in one ${keyword} \\(limit 100\\)`),
      );
      // diff has no loader limits: the comparison budget decides (a verdict or a located limit).
      if (run.diff.code === 2)
        expect(run.diff.stderr).toMatch(
          /v[12]\.schema\.json#\/properties\/data\S*: too-complex: too complex to compare: .* \(limit \d+\)\n {2}hint: /,
        );
      else expect(run.diff.stdout).toMatch(/evgen diff: (compatible|incompatible) under BACKWARD/);
    },
    300_000,
  );

  it('binary anyOf tree of depth 10: too many subschemas; diff stops at a located limit', async () => {
    const run = await runAll(anyOfTreeCase(10));
    expectNoCrash(run);
    expectLoaderRefusal(
      run,
      /v1\.schema\.json#\/properties\/data(\/anyOf\/[01])+: schema-too-complex/,
      /more than 2000 subschemas in one version \(limit 2000\)/,
    );
    expect(run.diff.code).toBe(2);
    expect(run.diff.stderr).toMatch(
      /v2\.schema\.json#\/properties\/data(\/anyOf\/[01])*: too-complex: too complex to compare: .*\(limit \d+\)/,
    );
  }, 300_000);

  it('$ref chain of 1200: the loader names the $ref past depth 100; diff follows it to a verdict', async () => {
    const run = await runAll(refChainCase(1200));
    expectNoCrash(run);
    expectLoaderRefusal(
      run,
      /v1\.schema\.json#\/definitions\/d99\/\$ref: schema-too-complex/,
      /\$refs lead one into another more than 100 deep \(limit 100\)/,
    );
    expect(run.diff.code).toBe(1);
    expect(run.diff.stdout).toMatch(/TYPE_CHANGED #\/properties\/data/);
  }, 300_000);

  it('$ref ring of 2000 objects: refused by the loader; diff stops at the depth limit, located', async () => {
    const run = await runAll(refRingCase(2000));
    expectNoCrash(run);
    expectLoaderRefusal(
      run,
      /v1\.schema\.json#\/definitions\/d\d+\/properties\/n: schema-too-complex/,
      /more than 2000 subschemas/,
    );
    expect(run.diff.code).toBe(2);
    expect(run.diff.stderr).toMatch(
      /v2\.schema\.json#\/properties\/data(\/properties\/n)+: too-complex: too complex to compare: schemas nested .* \(limit 400\)/,
    );
  }, 300_000);

  it('enum of 100,000 values: loads, compares and generates (a narrowed enum is found)', async () => {
    const run = await runAll(bigEnumCase(100_000));
    expectNoCrash(run);
    expect(run.check.code).toBe(1);
    expect(run.check.stdout).toMatch(
      /v2\.schema\.json#\/properties\/data\/enum: ENUM_ARRAY_NARROWED/,
    );
    expect(run.diff.code).toBe(1);
    expect(run.build.code).toBe(0);
    const types = readFileSync(join(run.out, 'shop', 'hostile', 'types.ts'), 'utf8');
    // Unformatted (over prettier's size limit), so double quotes; no toContain: it would print 3 MB.
    expect(types.includes('"v99999"')).toBe(true);
  }, 300_000);
});
