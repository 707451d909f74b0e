/** Runs the evgen CLI in-process and captures what it prints. */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';
import { runCli } from '../../../src/cli/main.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function evgen(...argv: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await runCli(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

export const EXAMPLE_EVENTS = fileURLToPath(new URL('../../../events', import.meta.url));

/** A temporary folder holding a copy of the example catalog as `events/`; removed by `dispose`. */
export async function exampleCopy(): Promise<{ dir: string; events: string; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'evgen-compat-'));
  const events = join(dir, 'events');
  await cp(EXAMPLE_EVENTS, events, { recursive: true });
  return { dir, events, dispose: () => rm(dir, { recursive: true, force: true }) };
}
