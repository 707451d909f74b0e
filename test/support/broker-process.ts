/**
 * The broker JVMs the tests start themselves (Kafka, Pulsar), known by a PID file in their data
 * dir and by their main class: a PID is signalled or waited on only while it still runs that
 * class (a PID file left by an earlier run may name another process by now).
 */
import { readdirSync, readFileSync } from 'node:fs';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The PID in `file`, or undefined when it is missing or not a PID. */
export function readPidFile(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** true while `pid` is a live (not zombie) process whose command line runs `mainClass`. */
export function runsJavaClass(pid: number, mainClass: string): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    if (/^State:\s+Z/m.test(status)) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(mainClass);
  } catch {
    return false;
  }
}

/** Resolves true once `alive` says the process is gone, false if it is still there after `timeoutMs`. */
export async function waitForExit(alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive()) return true;
    await delay(100);
  }
  return !alive();
}

/**
 * Resolves once `answers` does (polled every 250 ms); throws with the end of the broker's output
 * when its process exits first or `timeoutMs` passes (`what` names the broker in the error).
 */
export async function waitUntilAnswering(
  what: string,
  answers: () => Promise<boolean>,
  alive: () => boolean,
  timeoutMs: number,
  lastOutput: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answers()) return;
    if (!alive()) throw new Error(`${what} exited during start-up; last output:\n${lastOutput()}`);
    await delay(250);
  }
  throw new Error(`${what} did not answer within ${timeoutMs} ms; last output:\n${lastOutput()}`);
}

/** Each thread's scheduler state letter (`T` once SIGSTOP has stopped it), as `tid:state` words. */
export function threadStates(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map((tid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // The state follows the command name, which is in parentheses and may hold spaces.
        const state = stat.lastIndexOf(')') + 2;
        return `${tid}:${stat.slice(state, state + 1)}`;
      } catch {
        return `${tid}:gone`;
      }
    });
  } catch {
    return [];
  }
}

/**
 * Resolves once every thread of `pid` is stopped. A thread inside a system call stops only when
 * the call returns, so a test that relies on a paused broker waits for this after SIGSTOP rather
 * than assuming it; throws with the threads' states when `timeoutMs` passes first.
 */
export async function waitUntilStopped(pid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = threadStates(pid);
    if (states.length > 0 && states.every((state) => /:[tT]$/.test(state))) return;
    if (Date.now() >= deadline)
      throw new Error(`pid ${pid} not stopped after ${timeoutMs} ms: threads ${states.join(' ')}`);
    await delay(5);
  }
}
