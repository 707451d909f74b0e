import { describe, expect, it } from 'vitest';
import {
  routeFailure,
  tierForFailedAttempt,
  type KafkaRetryTier,
} from '../../src/runtime/kafka/consumer/failure-routing.js';

const tiers: KafkaRetryTier[] = [
  { topic: 'c.retry.1s', delayMs: 1_000 },
  { topic: 'c.retry.10s', delayMs: 10_000 },
];
const base = { tiers, maxAttempts: 4, strict: false, retryable: true, now: 1_000_000 };

describe('routeFailure', () => {
  it('sends retryable failures to the tier of the failed attempt, due after its delay', () => {
    expect(routeFailure({ ...base, attempt: 1 })).toEqual({
      kind: 'retry-topic',
      tier: tiers[0],
      nextAttempt: 2,
      dueAt: 1_001_000,
    });
    expect(routeFailure({ ...base, attempt: 2 })).toMatchObject({ tier: tiers[1], nextAttempt: 3 });
    // Past the last tier the last one again.
    expect(routeFailure({ ...base, attempt: 3 })).toMatchObject({ tier: tiers[1], nextAttempt: 4 });
  });

  it('dead-letters when attempts are exhausted, and non-retryable failures at once', () => {
    expect(routeFailure({ ...base, attempt: 4 })).toEqual({
      kind: 'dead-letter',
      reason: 'attempts-exhausted',
    });
    expect(routeFailure({ ...base, attempt: 1, retryable: false })).toEqual({
      kind: 'dead-letter',
      reason: 'non-retryable',
    });
    expect(routeFailure({ ...base, attempt: 1, tiers: [] })).toEqual({
      kind: 'dead-letter',
      reason: 'attempts-exhausted',
    });
  });

  it('retries strict events in place with exponential backoff, then dead-letters', () => {
    const strict = { ...base, strict: true, random: () => 0 };
    const inPlaceBackoff = { baseMs: 100, capMs: 350 };
    expect(routeFailure({ ...strict, attempt: 1, inPlaceBackoff })).toEqual({
      kind: 'retry-in-place',
      nextAttempt: 2,
      delayMs: 100,
    });
    expect(routeFailure({ ...strict, attempt: 2, inPlaceBackoff })).toMatchObject({ delayMs: 200 });
    expect(routeFailure({ ...strict, attempt: 3, inPlaceBackoff })).toMatchObject({ delayMs: 350 });
    expect(routeFailure({ ...strict, attempt: 4 })).toMatchObject({ kind: 'dead-letter' });
    expect(routeFailure({ ...strict, attempt: 1, retryable: false })).toMatchObject({
      kind: 'dead-letter',
      reason: 'non-retryable',
    });
    // Jitter only ever adds, at most the configured share.
    expect(
      routeFailure({
        ...strict,
        attempt: 1,
        inPlaceBackoff: { ...inPlaceBackoff, jitter: 0.5 },
        random: () => 0.999,
      }),
    ).toMatchObject({ delayMs: 150 });
  });

  it('tierForFailedAttempt clamps to the tiers it has', () => {
    expect(tierForFailedAttempt(tiers, 0)).toBe(tiers[0]);
    expect(tierForFailedAttempt(tiers, 7)).toBe(tiers[1]);
    expect(tierForFailedAttempt([], 1)).toBeUndefined();
  });
});
