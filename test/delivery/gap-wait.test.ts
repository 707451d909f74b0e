/**
 * The gap-wait rule (delivery/gap-wait.ts) and the pipeline deciding it: a gap waits at most
 * `gapWaitMs` without progress of its aggregate, the wait clock restarting when a later gap finds
 * a higher expected version; the whole wait ends 10 × `gapWaitMs` after the first gap; a clock the
 * message carries back (a header a producer might forge) can neither stop the wait nor restart it
 * without real progress.
 */
import { describe, expect, it } from 'vitest';
import { AggregateVersionGapError } from 'evgen/runtime';
import { createDeliveryPipeline } from '../../src/runtime/delivery/delivery-pipeline.js';
import type { Delivery } from '../../src/runtime/delivery/delivery.js';
import {
  decideGapWait,
  GAP_WAIT_CAP_FACTOR,
  type GapClock,
} from '../../src/runtime/delivery/gap-wait.js';
import { InboxHandlerError } from '../../src/runtime/inbox/inbox-handler-error.js';

const WAIT = 1_000;

/** Follows a message through gaps at the given times, expecting the given versions. */
function follow(gaps: readonly (readonly [now: number, expected: number])[]): boolean[] {
  let clock: GapClock | undefined;
  return gaps.map(([now, expected]) => {
    const decision = decideGapWait(clock, expected, now, WAIT);
    if (decision.park) clock = decision.clock;
    return decision.park;
  });
}

describe('gap wait: gapWaitMs without progress, bounded', () => {
  it('a gap without progress parks until gapWaitMs after the first gap, then no more', () => {
    expect(
      follow([
        [0, 3],
        [400, 3],
        [999, 3],
        [1_000, 3],
      ]),
    ).toEqual([true, true, true, false]);
  });

  it('progress (a higher expected version) restarts the clock, so a chain slower than gapWaitMs keeps waiting', () => {
    // One version every 800 ms: 4 s in all, never 1 s without progress.
    const gaps = [0, 1, 2, 3, 4, 5].map((pass) => [pass * 800, 3 + pass] as const);
    expect(follow(gaps)).toEqual([true, true, true, true, true, true]);
    // The same chain stalling after its last progress waits gapWaitMs more, not longer.
    expect(follow([...gaps, [4_000 + 999, 8], [4_000 + 1_000, 8]])).toEqual([
      ...gaps.map(() => true),
      true,
      false,
    ]);
  });

  it('ends 10 × gapWaitMs after the first gap even while the aggregate progresses', () => {
    const cap = GAP_WAIT_CAP_FACTOR * WAIT;
    const gaps = Array.from({ length: 40 }, (_, pass) => [pass * 500, 2 + pass] as const);
    const parks = follow(gaps);
    gaps.forEach(([now], i) => expect(parks[i]).toBe(now < cap));
  });

  it('a carried clock in the future counts as now; a forged expected version restarts it at most once', () => {
    const future: GapClock = { firstAt: 1e15, since: 1e15, expected: 5 };
    // Not a wait without end: taken as "since now", it ends gapWaitMs later.
    const first = decideGapWait(future, 5, 0, WAIT);
    expect(first).toMatchObject({ park: true, clock: { firstAt: 0, since: 0 } });
    expect(decideGapWait(first.park ? first.clock : undefined, 5, WAIT, WAIT).park).toBe(false);
    // A low forged expected restarts once; the clock then carries the version really found.
    const low = decideGapWait({ firstAt: 0, since: 0, expected: -1 }, 5, 900, WAIT);
    expect(low).toMatchObject({ park: true, clock: { since: 900, expected: 5 } });
    expect(decideGapWait(low.park ? low.clock : undefined, 5, 1_900, WAIT).park).toBe(false);
    // A high forged expected is no progress: the clock runs on.
    expect(decideGapWait({ firstAt: 0, since: 0, expected: 1e9 }, 5, WAIT, WAIT).park).toBe(false);
    // A forged first gap long ago only shortens the wait.
    expect(decideGapWait({ firstAt: -1e12, since: 0, expected: 4 }, 5, 10, WAIT).park).toBe(false);
  });

  it('gapWaitMs 0 never parks', () => {
    expect(decideGapWait(undefined, 2, 0, 0).park).toBe(false);
  });

  it('the pipeline parks a gap whatever its attempt while it may wait, and decides the rest as before', async () => {
    let now = 0;
    let expected = 4;
    const pipeline = createDeliveryPipeline({
      handler: {
        name: 'c',
        handle: () => {
          throw new InboxHandlerError(
            'c',
            'm-1',
            new AggregateVersionGapError('O', '1', expected, 9),
          );
        },
      },
      maxAttempts: 3,
      gapWaitMs: WAIT,
      now: () => now,
    });
    const delivery = (attempt: number, gapClock?: GapClock): Delivery => ({
      body: Buffer.from(JSON.stringify({ messageId: 'm-1', eventType: 'o.created' })),
      attempt,
      gapClock,
      facts: { transport: 'rabbitmq', redelivered: false, headers: {} },
    });
    const first = await pipeline.process(delivery(3));
    expect(first).toMatchObject({ kind: 'retry', attempt: 3, park: { clock: { expected: 4 } } });
    const clock = first.kind === 'retry' ? first.park!.clock : undefined;
    now = 1_500;
    // No progress for 1.5 s: the last attempt's gap is a dead letter.
    expect(await pipeline.process(delivery(3, clock))).toMatchObject({ kind: 'dead-letter' });
    // Progress meanwhile: it waits again.
    expected = 5;
    expect(await pipeline.process(delivery(3, clock))).toMatchObject({
      kind: 'retry',
      park: { clock: { since: 1_500, expected: 5, firstAt: 0 } },
    });
    // A transport without gap waits: an ordinary retry.
    const plain = createDeliveryPipeline({
      handler: {
        name: 'c',
        handle: () => {
          throw new AggregateVersionGapError('O', '1', 4, 9);
        },
      },
      maxAttempts: 3,
    });
    expect(await plain.process(delivery(1))).toMatchObject({ kind: 'retry', park: undefined });
  });
});
