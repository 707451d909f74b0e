/**
 * Patterns with polynomial backtracking (`^a*a*a*a*a*b$`, `(.*a){3}x`, `\s*\s*$`, `\d+\d+\d+x`)
 * on 1,000 characters, under `maxLength: 20`, in the generated standalone validators: they must
 * run on the linear-time engine. JavaScript's backtracking engine needs more than 20 s for each
 * (measured in the security review); here they run in a child process whose matching phase gets
 * 5 s — a fault detector for a blocked event loop, not a timing assertion: RE2 does it in
 * milliseconds, so only an engine that backtracks can reach the limit.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnTypeScript } from '../support/typescript-child.js';

const child = fileURLToPath(new URL('../support/hostile-pattern-child.ts', import.meta.url));
const MATCHING_LIMIT_MS = 5_000;

interface ChildOutcome {
  readonly ready?: { usesLinearPattern: boolean; usesRegExp: boolean };
  readonly results: { pattern: string; engine: string; asValue: boolean; asName: boolean }[];
  readonly timedOut: boolean;
  readonly code: number | null;
  readonly stderr: string;
}

function runChild(): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const process = spawnTypeScript(child, ['run'], 'ignore');
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    process.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // The limit starts when compiling is done: only matching is measured against it.
      if (timer === undefined && stdout.includes('\n'))
        timer = setTimeout(() => {
          timedOut = true;
          process.kill('SIGKILL');
        }, MATCHING_LIMIT_MS);
    });
    process.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    process.on('close', (code) => {
      clearTimeout(timer);
      const lines = stdout.split('\n').filter((line) => line !== '');
      const first = lines[0];
      resolve({
        ...(first?.startsWith('ready ') ? { ready: JSON.parse(first.slice(6)) } : {}),
        results: lines.slice(1).map((line) => JSON.parse(line)),
        timedOut,
        code,
        stderr,
      });
    });
  });
}

describe('generated validators match patterns in linear time', () => {
  it('four polynomial patterns on 1,000 characters return (as values and as property names)', async () => {
    const outcome = await runChild();
    expect(outcome.stderr).toBe('');
    expect(outcome.ready).toEqual({ usesLinearPattern: true, usesRegExp: false });
    expect(outcome.timedOut).toBe(false);
    expect(outcome.code).toBe(0);
    expect(outcome.results).toEqual([
      { pattern: '^a*a*a*a*a*b$', engine: 'RE2', asValue: false, asName: false },
      { pattern: '(.*a){3}x', engine: 'RE2', asValue: false, asName: false },
      { pattern: '\\s*\\s*$', engine: 'RE2', asValue: false, asName: false },
      { pattern: '\\d+\\d+\\d+x', engine: 'RE2', asValue: false, asName: false },
    ]);
  }, 60_000);
});
