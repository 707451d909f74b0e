/** Exponential backoff with jitter: `min(cap, base × 2^(n-1)) + jitter`, n from 1. */
import { backoffDelayMs } from '../outbox/backoff.js';

export interface BackoffOptions {
  /** Delay before the first retry, ms. Default 100. */
  readonly baseMs?: number;
  /** Largest delay before jitter, ms. Default 5000. */
  readonly capMs?: number;
  /** Random extra delay as a fraction of the delay (0–1). Default 0.2. */
  readonly jitter?: number;
}

export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 100;
  const cap = options.capMs ?? 5_000;
  const jitter = options.jitter ?? 0.2;
  // The outbox's formula without its absolute jitter; here the jitter is a share of the delay.
  const delay = backoffDelayMs(attempt, { baseMs: base, capMs: cap, jitterMs: 0 });
  return Math.round(delay + delay * jitter * Math.random());
}

/** Resolves after `ms`, or early when `signal` aborts (without rejecting). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
