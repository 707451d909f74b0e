import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/runtime/rabbitmq/backoff.js';

describe('reconnect backoff', () => {
  it('doubles from the base up to the cap, with no jitter when jitter is 0', () => {
    const options = { baseMs: 100, capMs: 1_000, jitter: 0 };
    expect([0, 1, 2, 3, 4, 5, 50].map((attempt) => backoffDelay(attempt, options))).toEqual([
      100, 100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it('adds at most the jitter share of the delay', () => {
    for (let i = 0; i < 50; i++) {
      const delay = backoffDelay(3, { baseMs: 100, capMs: 10_000, jitter: 0.5 });
      expect(delay).toBeGreaterThanOrEqual(400);
      expect(delay).toBeLessThanOrEqual(600);
    }
  });
});
