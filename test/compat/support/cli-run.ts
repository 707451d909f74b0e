/** Runs the evgen CLI in-process and captures what it prints. */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../../src/cli/main.js';
import { captureOutput } from '../../cli/capture-output.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function evgen(...argv: string[]): Promise<CliResult> {
  const output = captureOutput();
  try {
    const code = await runCli(argv);
    return { code, stdout: output.stdout(), stderr: output.stderr() };
  } finally {
    output.restore();
  }
}

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
