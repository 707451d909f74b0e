/** Retry delays for failed publishes. */

export interface BackoffOptions {
  /** Delay after the first failure, in ms. */
  readonly baseMs: number;
  /** Upper bound of the exponential part, in ms. */
  readonly capMs: number;
  /** A uniformly random 0…jitterMs is added, so failed rows do not retry in lockstep. */
  readonly jitterMs: number;
}

/**
 * `min(cap, base · 2^(n-1)) + jitter` for the n-th failed attempt (n ≥ 1), in whole ms.
 * `random` returns a number in [0, 1) (Math.random by default; tests pass a fixed one).
 */
export function backoffDelayMs(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const n = Math.max(1, Math.floor(attempt));
  // 2^(n-1) overflows to Infinity for huge n; min() with the cap keeps the result finite.
  const exponential = Math.min(options.capMs, options.baseMs * 2 ** (n - 1));
  return Math.round(exponential + random() * options.jitterMs);
}
