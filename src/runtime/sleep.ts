/** Timers `sleep` waits with (a runner's `timers` seam); the process's own by default. */
interface SleepTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const PROCESS_TIMERS: SleepTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`, or early when `signal` aborts (without rejecting). */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  timers: SleepTimers = PROCESS_TIMERS,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = timers.setTimeout(done, ms);
    function done() {
      timers.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits for `work` at most `ms` (on `timers`): settles as `work` does, or resolves once `ms`
 * passed. For closes that must not hang on a peer that does not answer.
 */
export async function waitAtMost(
  work: Promise<unknown>,
  ms: number,
  timers: SleepTimers = PROCESS_TIMERS,
): Promise<void> {
  const gaveUp = new AbortController();
  try {
    await Promise.race([work, sleep(ms, gaveUp.signal, timers)]);
  } finally {
    gaveUp.abort();
  }
}
