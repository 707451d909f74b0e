/** Captures what a command prints to stdout/stderr during one test. */
import { vi } from 'vitest';
import { runCli } from '../../src/cli/main.js';

export interface CapturedOutput {
  readonly stdout: () => string;
  readonly stderr: () => string;
  restore(): void;
}

export function captureOutput(): CapturedOutput {
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
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    restore: () => {
      out.mockRestore();
      err.mockRestore();
    },
  };
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the evgen CLI in-process and returns its exit code and what it printed. */
export async function runCliCaptured(...argv: string[]): Promise<CliResult> {
  const output = captureOutput();
  try {
    const code = await runCli(argv);
    return { code, stdout: output.stdout(), stderr: output.stderr() };
  } finally {
    output.restore();
  }
}
