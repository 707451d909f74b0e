/** Runs the evgen CLI in-process and captures what it prints. */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliCaptured } from '../../cli/capture-output.js';

export type { CliResult } from '../../cli/capture-output.js';
export const evgen = runCliCaptured;

export const EXAMPLE_EVENTS = fileURLToPath(new URL('../../../events', import.meta.url));

/** A temporary folder holding a copy of the example catalog as `events/`; removed by `dispose`. */
export async function exampleCopy(): Promise<{
  dir: string;
  events: string;
  dispose: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'evgen-compat-'));
  const events = join(dir, 'events');
  await cp(EXAMPLE_EVENTS, events, { recursive: true });
  return { dir, events, dispose: () => rm(dir, { recursive: true, force: true }) };
}
