import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { oneEvent, tempCatalog, type TempCatalog } from '../catalog/temp-catalog.js';
import { captureOutput, type CapturedOutput } from './capture-output.js';

let catalog: TempCatalog;
let output: CapturedOutput;

beforeEach(async () => {
  catalog = await tempCatalog(oneEvent());
  output = captureOutput();
});

afterEach(async () => {
  output.restore();
  await catalog.cleanup();
});

it('says there is nothing to scaffold when no consumer is declared, instead of "every stub already exists"', async () => {
  const handlers = join(catalog.dir, 'handlers');
  expect(await runCli(['scaffold', '--events', catalog.events, '--handlers', handlers, '--out', join(catalog.dir, 'generated')])).toBe(0);
  expect(output.stdout()).toMatch(/no consumers are declared .*_consumers/);
  expect(output.stdout()).not.toContain('every stub already exists');
  expect(existsSync(handlers)).toBe(false);
});

it('reports a bad catalog like build does: problems on stderr, exit 2', async () => {
  expect(await runCli(['scaffold', '--events', join(catalog.dir, 'missing')])).toBe(2);
  expect(output.stderr()).toMatch(/missing: the events folder does not exist[^\n]*\n  hint: /);
});
