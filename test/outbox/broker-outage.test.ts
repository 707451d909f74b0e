/**
 * The relay's outage backoff as a pure state: one step per failed round (the publishes in
 * flight together), doubling from round to round, and a confirmed publish ends it at once.
 */
import { describe, expect, it } from 'vitest';
import { BrokerOutage } from '../../src/runtime/outbox/broker-outage.js';

const doubling = (streak: number) => 500 * 2 ** (streak - 1);

describe('BrokerOutage', () => {
  it('counts the failures of one round as one step, the next round as the next', () => {
    const outage = new BrokerOutage();
    const round = outage.round;
    // Fifty publishes in flight fail together: one step of 500 ms.
    const delays = Array.from({ length: 50 }, (_, i) => outage.failed(round, 1_000 + i, doubling));
    expect(new Set(delays)).toEqual(new Set([500]));
    expect(outage.streak).toBe(1);
    expect(outage.until).toBe(1_500);
    // The next round, started after the step, fails too: 1 s.
    const next = outage.round;
    expect(outage.failed(next, 1_600, doubling)).toBe(1_000);
    expect(outage.failed(next, 1_610, doubling)).toBe(1_000);
    expect(outage.streak).toBe(2);
    expect(outage.until).toBe(2_600);
  });

  it('ends at once when a publish is confirmed, and tells the waiting lanes', () => {
    let ended = 0;
    const outage = new BrokerOutage(() => ended++);
    outage.failed(outage.round, 0, doubling);
    outage.failed(outage.round, 600, doubling);
    expect(outage.until).toBe(1_600);
    outage.succeeded();
    expect({ streak: outage.streak, until: outage.until, ended }).toEqual({
      streak: 0,
      until: 0,
      ended: 1,
    });
    // Healthy: nothing to end, nobody woken.
    outage.succeeded();
    expect(ended).toBe(1);
    // A publish started before the confirm that fails afterwards starts a new outage at step 1.
    expect(outage.failed(0, 2_000, doubling)).toBe(500);
    expect(outage.streak).toBe(1);
  });
});
