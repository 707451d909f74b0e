/**
 * The broker JVMs the tests start themselves (Kafka, Pulsar), known by a PID file in their data
 * dir and by their main class: a PID is signalled or waited on only while it still runs that
 * class (a PID file left by an earlier run may name another process by now).
 */
import { readFileSync } from 'node:fs';

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
