/**
 * End to end with the real target registry on the example catalog: a build into an empty folder,
 * a second build that changes nothing, and a --check that agrees.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { captureOutput, type CapturedOutput } from './capture-output.js';

const events = fileURLToPath(new URL('../../events', import.meta.url));
let out: string;
let output: CapturedOutput;

beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'evgen-build-example-'));
  output = captureOutput();
});

afterEach(async () => {
  output.restore();
  await rm(out, { recursive: true, force: true });
});

it('builds the example catalog, then a second build writes nothing and --check passes', async () => {
  expect(await runCli(['build', '--events', events, '--out', out])).toBe(0);
  const first = /(\d+) files in .*: (\d+) written, 0 unchanged, 0 removed/.exec(output.stdout());
  expect(first, output.stdout() + output.stderr()).not.toBeNull();
  expect(first![2]).toBe(first![1]);

  expect(await runCli(['build', '--events', events, '--out', out])).toBe(0);
  expect(output.stdout()).toContain(`0 written, ${first![1]} unchanged, 0 removed`);
  expect(await runCli(['build', '--check', '--events', events, '--out', out])).toBe(0);
  expect(output.stderr()).toBe('');
}, 120_000);
