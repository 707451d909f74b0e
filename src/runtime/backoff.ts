/**
 * The one retry-delay shape of the runtime (outbox relay, RabbitMQ reconnects and circuit
 * breaker, Kafka in-place retries and settle retries): exponential from `baseMs`, capped at
 * `capMs`, plus a random share of the delay so that many failures do not retry in lockstep.
 */

export interface BackoffOptions {
  /** Delay after the first failure, ms. */
  readonly baseMs?: number;
  /** Largest delay before jitter, ms. */
  readonly capMs?: number;
  /**
   * Random extra delay as a share of the delay, 0–1: up to `delay × jitter` is added (0: none).
   * A share rather than a fixed number of ms keeps long delays spread as well as short ones.
   */
  readonly jitter?: number;
}

/** Backoff with every setting given: what each user of `backoffDelay` passes as its defaults. */
export type BackoffSettings = Required<BackoffOptions>;

/**
 * `min(cap, base · 2^(n-1)) · (1 + jitter · random())` for the n-th failure (n ≥ 1; smaller n
 * counts as 1), in whole ms. Settings missing from `options` come from `defaults`; `random`
 * returns a number in [0, 1) (Math.random by default; tests pass a fixed one).
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions | undefined,
  defaults: BackoffSettings,
  random: () => number = Math.random,
): number {
  const baseMs = options?.baseMs ?? defaults.baseMs;
  const capMs = options?.capMs ?? defaults.capMs;
  const jitter = options?.jitter ?? defaults.jitter;
  const n = Math.max(1, Math.floor(attempt));
  // 2^(n-1) overflows to Infinity for huge n; min() with the cap keeps the result finite.
  const delay = Math.min(capMs, baseMs * 2 ** (n - 1));
  return Math.round(delay + delay * jitter * random());
}
