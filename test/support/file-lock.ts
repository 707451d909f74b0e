/**
 * A lock between processes on one machine: a directory, since mkdir is atomic. Guards the jar
 * downloads and broker starts that parallel test runs would otherwise do twice.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';

const STALE_LOCK_MS = 5 * 60_000;

/** A lock directory (mkdir is atomic); a lock older than 5 min is taken as left by a killed run. */
function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true });
    } catch {
      // gone in between: retry
    }
    return false;
  }
}

/** Runs `body` holding `lock`, waiting synchronously while another process holds it. */
export function withLock<T>(lock: string, body: () => T): T {
  while (!tryLock(lock)) {
    // Synchronous wait: only jar downloads and compiles use it, and only another process holds it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  try {
    return body();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs `body` holding `lock`, waiting asynchronously while another process holds it. */
export async function withLockAsync<T>(lock: string, body: () => Promise<T>): Promise<T> {
  while (!tryLock(lock)) await delay(200);
  try {
    return await body();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
