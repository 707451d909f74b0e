/**
 * The relay's outage backoff as a pure state: one step per failed round (the publishes in
 * flight together), doubling from round to round, and a confirmed publish ends it at once; and
 * the reconnect probe, with a scripted probe: a reconnect ends the outage, a connection that was
 * up all along (publishes failing for another reason) does not.
 */
import { describe, expect, it } from 'vitest';
import { BrokerOutage } from '../../src/runtime/outbox/broker-outage.js';
import { outageProbe } from '../../src/runtime/outbox/outage-probe.js';

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

  describe('reconnect probe', () => {
    const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    /** An outage whose steps are long (60 s), with a probe answering from `reachable()`. */
    function probed(reachable: () => boolean) {
      let ended = 0;
      let probes = 0;
      const outage: BrokerOutage = new BrokerOutage(
        () => ended++,
        () => probe.watch(),
      );
      const probe = outageProbe({
        outage,
        probe: async () => {
          probes++;
          if (!reachable()) throw new Error('connection refused');
        },
        nowMs: Date.now,
        isStopping: () => false,
        intervalMs: 5,
        timeoutMs: 50,
      });
      const fail = () => outage.failed(outage.round, Date.now(), () => 60_000);
      return { outage, fail, ended: () => ended, probes: () => probes };
    }

    it('the broker coming back ends a long step at once', async () => {
      let up = false;
      const p = probed(() => up);
      p.fail();
      await settle(40);
      expect(p.ended()).toBe(0);
      expect(p.probes()).toBeGreaterThan(1);
      up = true;
      for (let i = 0; i < 100 && p.ended() === 0; i++) await settle(5);
      expect({ ended: p.ended(), streak: p.outage.streak, until: p.outage.until }).toEqual({
        ended: 1,
        streak: 0,
        until: 0,
      });
    });

    it('a probe that never answers counts as unreachable; its answer later is the reconnect', async () => {
      let release: (() => void) | undefined;
      let ended = 0;
      const outage = new BrokerOutage(
        () => ended++,
        () => probe.watch(),
      );
      const pending = new Promise<void>((resolve) => (release = resolve));
      const probe = outageProbe({
        outage,
        probe: () => pending,
        nowMs: Date.now,
        isStopping: () => false,
        intervalMs: 5,
        timeoutMs: 20,
      });
      outage.failed(outage.round, Date.now(), () => 60_000);
      await settle(60);
      expect(ended).toBe(0);
      release!();
      for (let i = 0; i < 100 && ended === 0; i++) await settle(5);
      expect(ended).toBe(1);
    });

    it('a connection up all along ends nothing: the backoff runs its course', async () => {
      const p = probed(() => true);
      p.fail();
      await settle(40);
      p.fail(); // the next round failed too (e.g. the broker blocks publishes while connected)
      await settle(40);
      expect(p.ended()).toBe(0);
      expect(p.outage.streak).toBe(2);
      expect(p.probes()).toBe(2);
    });

    it('unreachable in an earlier step of the same outage: up at the next step is a reconnect', async () => {
      let up = false;
      const p = probed(() => up);
      p.fail();
      await settle(30);
      up = true; // back between two steps; the next round failed before it noticed
      p.outage.until = Date.now(); // the first step ran out
      await settle(20);
      p.fail();
      for (let i = 0; i < 100 && p.ended() === 0; i++) await settle(5);
      expect(p.ended()).toBe(1);
    });
  });
});
