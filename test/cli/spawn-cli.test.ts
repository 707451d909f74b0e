/**
 * The real `evgen` process (through tsx): exit codes reach the shell, problems go to stderr,
 * results to stdout.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

async function evgen(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: repo },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'evgen-spawn-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

it('exits 2 with the problems on stderr for a bad catalog', async () => {
  const result = await evgen(['build', '--events', 'test/corpus/version-gap/events', '--out', out]);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toContain(
    'test/corpus/version-gap/events/shop/OrderPlaced: version-gap: versions must be 1..3 without gaps; missing v2.schema.json',
  );
});

it('scaffolds an event, exits 1 for --check on an empty output folder and 2 for a usage error', async () => {
  const events = join(out, 'events');
  expect((await evgen(['new', 'shop/OrderPlaced', '--events', events])).code).toBe(0);
  const check = await evgen([
    'build',
    '--check',
    '--events',
    events,
    '--out',
    join(out, 'generated'),
  ]);
  expect(check.code).toBe(1);
  expect(check.stdout).toContain('missing: ');
  const usage = await evgen(['build', '--bogus']);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("unknown option '--bogus'");
});
