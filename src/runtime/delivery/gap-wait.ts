/**
 * How long a message found ahead of a missing version of its aggregate (`ctx.inOrder`'s gap) may
 * wait without using an attempt: the one rule, for every transport that parks gaps (RabbitMQ's
 * `gapWaitMs`; Kafka and Pulsar keep an aggregate's order in the partition or key, so a gap there
 * is an ordinary retryable failure and nothing waits).
 *
 *   - A gap waits at most `gapWaitMs` WITHOUT PROGRESS of its aggregate: the wait clock restarts
 *     when a later gap finds the aggregate expecting a higher version than the gap before it did
 *     (its predecessor chain advanced). Measured from the first gap alone, a chain v3←v4←v5…
 *     that unwinds one version per pass through a long backlog (a second consumer's requeued
 *     messages after a SIGKILL) outlived the wait and good messages were dead-lettered.
 *   - However much the aggregate progresses, the whole wait ends `GAP_WAIT_CAP_FACTOR` ×
 *     `gapWaitMs` after the first gap, so a parked copy never circulates without end.
 *   - The clock travels with the message (the transport's trusted headers), so it is read as a
 *     claim: a time later than now counts as now and an expected version not below the one found
 *     now counts as no progress. A forged clock can neither stop the wait nor restart it more
 *     than once, and the cap still counts from the first gap.
 */

/** The whole gap wait ends this many `gapWaitMs` after the first gap, progress or not. */
export const GAP_WAIT_CAP_FACTOR = 10;

/** A gap wait so far, as the message carries it back (times in epoch ms). */
export interface GapClock {
  /** When the first gap was found. */
  readonly firstAt: number;
  /** When the wait clock last (re)started: the first gap, or the last one that saw progress. */
  readonly since: number;
  /** The version the aggregate expected at that gap; undefined when not known. */
  readonly expected?: number | undefined;
}

/** The pipeline's verdict on a gap: park it (attempt unchanged) carrying `clock`, or not. */
export type GapWaitDecision =
  | {
      readonly park: true;
      readonly clock: GapClock;
      /** How long this gap has waited without progress (since `clock.since`). */
      readonly waitedMs: number;
    }
  | { readonly park: false };

/**
 * Whether a gap found at `now` (the aggregate expecting `expected`) parks again, given the clock
 * the message carried (`previous`, undefined on its first gap).
 */
export function decideGapWait(
  previous: GapClock | undefined,
  expected: number | undefined,
  now: number,
  gapWaitMs: number,
): GapWaitDecision {
  // A carried time in the future (a forged or skewed clock) counts as now: it cannot stop the wait.
  const notAfterNow = (time: number): number => (Number.isFinite(time) && time < now ? time : now);
  const firstAt = previous === undefined ? now : notAfterNow(previous.firstAt);
  const progressed =
    previous !== undefined &&
    expected !== undefined &&
    (previous.expected === undefined || expected > previous.expected);
  const since =
    previous === undefined || progressed ? now : Math.max(firstAt, notAfterNow(previous.since));
  const waitedMs = now - since;
  if (!(waitedMs < gapWaitMs) || !(now - firstAt < GAP_WAIT_CAP_FACTOR * gapWaitMs))
    return { park: false };
  return { park: true, clock: { firstAt, since, expected }, waitedMs };
}
