/**
 * The relay's adaptive idle wait (no NOTIFY on MySQL/MariaDB): the schedule grows from the floor
 * to the ceiling while claims find nothing and starts again at the floor after work or a wake-up;
 * driven through the relay's wait with a fake clock, a wake-up ends the wait and resets it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  IdlePollSchedule,
  checkIdlePollOptions,
  waitWhileIdle,
} from '../../src/runtime/outbox/idle-poll-schedule.js';
import { WakeSignal } from '../../src/runtime/outbox/wake-signal.js';

describe('IdlePollSchedule', () => {
  it('doubles the wait from the floor with each idle round and holds it at the ceiling', () => {
    const schedule = new IdlePollSchedule({ floorMs: 25, ceilingMs: 500 });
    const waits = Array.from({ length: 8 }, () => schedule.next());
    expect(waits).toEqual([25, 50, 100, 200, 400, 500, 500, 500]);
  });

  it('starts again at the floor after a reset (work found or a wake-up)', () => {
    const schedule = new IdlePollSchedule({ floorMs: 10, ceilingMs: 80 });
    for (let i = 0; i < 6; i++) schedule.next();
    expect(schedule.next()).toBe(80);
    schedule.reset();
    expect([schedule.next(), schedule.next()]).toEqual([10, 20]);
  });

  it('is a fixed interval when floor and ceiling are equal', () => {
    const schedule = new IdlePollSchedule({ floorMs: 1_000, ceilingMs: 1_000 });
    expect([schedule.next(), schedule.next(), schedule.next()]).toEqual([1_000, 1_000, 1_000]);
  });

  it('refuses a floor above the ceiling and non-positive waits, naming the relay option', () => {
    expect(() => checkIdlePollOptions({ floorMs: 2_000, ceilingMs: 1_000 })).toThrow(
      /minPollIntervalMs \(2000\) must not exceed pollIntervalMs \(1000\)/,
    );
    expect(() => new IdlePollSchedule({ floorMs: 0, ceilingMs: 1_000 })).toThrow(
      /minPollIntervalMs must be a positive number/,
    );
    expect(() => new IdlePollSchedule({ floorMs: 10, ceilingMs: Number.NaN })).toThrow(
      /pollIntervalMs must be a positive number/,
    );
  });
});

describe('an idle lane waiting on the schedule, on a fake clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const idleRound = (schedule: IdlePollSchedule, signal: WakeSignal) =>
    waitWhileIdle(schedule, signal);

  it('waits each delay in full when nothing wakes it, and a wake-up ends the wait and resets', async () => {
    vi.useFakeTimers();
    const schedule = new IdlePollSchedule({ floorMs: 20, ceilingMs: 160 });
    const signal = new WakeSignal(() => false);

    for (const wait of [20, 40, 80, 160, 160]) {
      let ended: boolean | undefined;
      const round = idleRound(schedule, signal).then((woken) => (ended = woken));
      await vi.advanceTimersByTimeAsync(wait - 1);
      expect(ended).toBeUndefined(); // not a millisecond early
      await vi.advanceTimersByTimeAsync(1);
      await round;
      expect(ended).toBe(false); // the full wait, no wake-up
    }

    // At the ceiling now: a wake-up 5 ms in ends the 160 ms wait at once…
    const woken = idleRound(schedule, signal);
    await vi.advanceTimersByTimeAsync(5);
    signal.notify();
    await expect(woken).resolves.toBe(true);
    // …and the next wait is the floor again.
    expect(schedule.next()).toBe(20);
  });

  it('returns at once for a wake-up that arrived while the lane was busy, and resets', async () => {
    vi.useFakeTimers();
    const schedule = new IdlePollSchedule({ floorMs: 20, ceilingMs: 160 });
    for (let i = 0; i < 4; i++) schedule.next();
    const signal = new WakeSignal(() => false);
    signal.notify(); // nobody waiting: remembered
    await expect(idleRound(schedule, signal)).resolves.toBe(true);
    expect(schedule.next()).toBe(20);
  });
});
