/**
 * Where a Kafka retry goes (pure; the runner carries it out). Whether a failure is retried or
 * dead-lettered is decided once, by the delivery pipeline; this only places a retry:
 *
 * - an ordinary event: a copy goes to the retry topic of the delay tier for this attempt
 *   (attempt 1 → first tier, 2 → second, …; past the last tier the last one again), due
 *   `delayMs` later. The partition it came from moves on at once, so one slow record never holds
 *   up the others (non-blocking retries);
 * - a `strict` event, or any event of a consumer without retry topics: the record is retried in
 *   place after a backoff while its partition waits (paused), so nothing behind it overtakes it.
 */
import { backoffDelay, type BackoffOptions, type BackoffSettings } from '../../backoff.js';

export interface KafkaRetryTier {
  /** The consumer's retry topic for this delay. */
  readonly topic: string;
  /** How long a copy waits on this topic before it is handled again, ms. */
  readonly delayMs: number;
}

/** How a strict-ordering record is retried in place, when the options leave a setting out. */
const DEFAULT_IN_PLACE_BACKOFF: BackoffSettings = {
  baseMs: 500,
  capMs: 30_000,
  jitter: 0.2,
};

type RetryPlace =
  | {
      readonly kind: 'retry-topic';
      readonly tier: KafkaRetryTier;
      /** The attempt the copy will be. */
      readonly nextAttempt: number;
      /** Epoch ms before which the copy is not handled. */
      readonly dueAt: number;
    }
  | { readonly kind: 'retry-in-place'; readonly nextAttempt: number; readonly delayMs: number };

interface RetryPlacementInput {
  /** The attempt that failed (1 = first delivery). */
  readonly attempt: number;
  /** The record's event wants strict per-partition order (retry in place, never a retry topic). */
  readonly strict: boolean;
  readonly tiers: readonly KafkaRetryTier[];
  /** Default DEFAULT_IN_PLACE_BACKOFF (500 ms, 30 s, 0.2). */
  readonly inPlaceBackoff?: BackoffOptions | undefined;
  readonly now: number;
  /** [0, 1); Math.random by default. */
  readonly random?: () => number;
}

/** The tier a failed attempt goes to: attempt n → tier n (1-based), the last tier past the end. */
export function tierForFailedAttempt(
  tiers: readonly KafkaRetryTier[],
  attempt: number,
): KafkaRetryTier | undefined {
  if (tiers.length === 0) return undefined;
  return tiers[Math.min(Math.max(1, attempt), tiers.length) - 1];
}

/** Where the retry the pipeline decided goes: never a dead letter. */
export function placeRetry(input: RetryPlacementInput): RetryPlace {
  const nextAttempt = input.attempt + 1;
  const tier = input.strict ? undefined : tierForFailedAttempt(input.tiers, input.attempt);
  if (tier === undefined) {
    const delayMs = backoffDelay(
      input.attempt,
      input.inPlaceBackoff,
      DEFAULT_IN_PLACE_BACKOFF,
      input.random,
    );
    return { kind: 'retry-in-place', nextAttempt, delayMs };
  }
  return { kind: 'retry-topic', tier, nextAttempt, dueAt: input.now + tier.delayMs };
}
