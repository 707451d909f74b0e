import { describe, expect, it } from 'vitest';
import {
  placeRetry,
  tierForFailedAttempt,
  type KafkaRetryTier,
} from '../../src/runtime/kafka/consumer/failure-routing.js';

const tiers: KafkaRetryTier[] = [
  { topic: 'c.retry.1s', delayMs: 1_000 },
  { topic: 'c.retry.10s', delayMs: 10_000 },
];
const base = { tiers, strict: false, now: 1_000_000 };

describe('placeRetry', () => {
  it('sends a retry to the tier of the failed attempt, due after its delay', () => {
    expect(placeRetry({ ...base, attempt: 1 })).toEqual({
      kind: 'retry-topic',
      tier: tiers[0],
      nextAttempt: 2,
      dueAt: 1_001_000,
    });
    expect(placeRetry({ ...base, attempt: 2 })).toMatchObject({ tier: tiers[1], nextAttempt: 3 });
    // Past the last tier the last one again: the pipeline alone says when attempts are spent.
    expect(placeRetry({ ...base, attempt: 9 })).toMatchObject({ tier: tiers[1], nextAttempt: 10 });
  });

  it('retries in place when the consumer has no retry topics: a retry is never a dead letter', () => {
    expect(placeRetry({ ...base, attempt: 1, tiers: [], random: () => 0 })).toEqual({
      kind: 'retry-in-place',
      nextAttempt: 2,
      delayMs: 500,
    });
  });

  it('retries strict events in place with exponential backoff', () => {
    const strict = { ...base, strict: true, random: () => 0 };
    const inPlaceBackoff = { baseMs: 100, capMs: 350 };
    expect(placeRetry({ ...strict, attempt: 1, inPlaceBackoff })).toEqual({
      kind: 'retry-in-place',
      nextAttempt: 2,
      delayMs: 100,
    });
    expect(placeRetry({ ...strict, attempt: 2, inPlaceBackoff })).toMatchObject({ delayMs: 200 });
    expect(placeRetry({ ...strict, attempt: 3, inPlaceBackoff })).toMatchObject({ delayMs: 350 });
    // Jitter only ever adds, at most the configured share.
    expect(
      placeRetry({
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
