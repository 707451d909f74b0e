import { describe, expect, it } from 'vitest';
import { backoffDelay, type BackoffSettings } from '../../src/runtime/backoff.js';

const defaults: BackoffSettings = { baseMs: 100, capMs: 1_000, jitter: 0 };

describe('backoffDelay (relay, reconnects, circuit breaker, Kafka retries)', () => {
  it('doubles from the base up to the cap, with no jitter when jitter is 0', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((attempt) => backoffDelay(attempt, {}, defaults))).toEqual([
      100, 100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it('stays finite for huge attempt numbers', () => {
    expect(backoffDelay(5_000, undefined, defaults)).toBe(1_000);
  });

  it('adds at most the jitter share of the delay', () => {
    for (let i = 0; i < 50; i++) {
      const delay = backoffDelay(3, { capMs: 10_000, jitter: 0.5 }, defaults);
      expect(delay).toBeGreaterThanOrEqual(400);
      expect(delay).toBeLessThanOrEqual(600);
    }
  });

  it('takes each missing setting from the defaults and uses the given random source', () => {
    expect(backoffDelay(2, { baseMs: 50 }, { ...defaults, jitter: 0.5 }, () => 0.5)).toBe(125);
    expect(backoffDelay(2, { jitter: 1 }, defaults, () => 0.25)).toBe(250);
  });
});
