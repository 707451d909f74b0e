/**
 * Starts a TypeScript file as a child process: Node itself with tsx's loader. The `tsx` binary
 * would put a wrapper process in between, and a SIGKILL sent to the wrapper would leave the real
 * child running — the opposite of what crash tests need.
 */
import { spawn, type ChildProcessWithoutNullStreams, type StdioPipe } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const tsxLoader = pathToFileURL(
  fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url)),
).href;

/**
 * Runs `script` with `args`; stdin is piped (`'pipe'`) or closed (`'ignore'`), stdout and stderr
 * are piped. `env` adds to (or overrides) this process's environment.
 */
export function spawnTypeScript(
  script: string,
  args: readonly string[],
  stdin: StdioPipe | 'ignore' = 'pipe',
  env: Readonly<Record<string, string>> = {},
): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', tsxLoader, script, ...args], {
    stdio: [stdin, 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  }) as ChildProcessWithoutNullStreams;
}
