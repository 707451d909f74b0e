/**
 * The offset committer's invariant, with a recording fake of the commit request (pure logic): the
 * committed position never passes a record that was not received and settled, whatever order or
 * holes the client delivers records in.
 */
import { describe, expect, it, vi } from 'vitest';
import { OffsetCommitter } from '../../src/runtime/kafka/consumer/offset-committer.js';
import type { KafkaCommitOffset } from '../../src/runtime/kafka/kafka-client.js';

const tp = { topic: 'orders', partition: 3 };

function recording() {
  const requests: KafkaCommitOffset[][] = [];
  const committer = new OffsetCommitter({
    commit: async (offsets) => {
      requests.push([...offsets]);
    },
  });
  const committed = async () => {
    await committer.flush();
    return requests.flat().at(-1)?.offset;
  };
  return { committer, requests, committed };
}

/** Receives and settles records in turn, as the runner does (settled = offset + 1). */
function handle(committer: OffsetCommitter, offsets: readonly number[]): (bigint | undefined)[] {
  return offsets.map((offset) => {
    const seekTo = committer.received(tp, BigInt(offset));
    if (seekTo === undefined) committer.settled(tp, BigInt(offset) + 1n);
    return seekTo;
  });
}

describe('OffsetCommitter', () => {
  it('commits the position after the last settled record of a contiguous run', async () => {
    const { committer, committed } = recording();
    handle(committer, [10, 11, 12]);
    expect(await committed()).toBe('13');
    expect(committer.position(tp)).toBe(13n);
  });

  it('a record ahead of the expected one is a hole: seek back, the position stays below it', async () => {
    const { committer, committed } = recording();
    expect(handle(committer, [43, 44, 58])).toEqual([undefined, undefined, 45n]);
    expect(await committed()).toBe('45');
    expect(committer.holes).toBe(1);
    // After the seek the skipped records come: the position moves through them.
    expect(handle(committer, [45, 46])).toEqual([undefined, undefined]);
    expect(await committed()).toBe('47');
  });

  it('the same record first again after the seek: the offsets in between do not exist', async () => {
    const { committer, committed } = recording();
    expect(handle(committer, [5, 9])).toEqual([undefined, 6n]);
    expect(handle(committer, [9, 10])).toEqual([undefined, undefined]);
    expect(await committed()).toBe('11');
  });

  it('a different record ahead after the seek is a new hole, not a confirmation', async () => {
    const { committer, committed } = recording();
    expect(handle(committer, [5, 9])).toEqual([undefined, 6n]);
    expect(handle(committer, [12])).toEqual([6n]);
    expect(await committed()).toBe('6');
  });

  it('never passes a received record that is not settled, even when later ones settle', async () => {
    const { committer, committed } = recording();
    committer.received(tp, 20n);
    committer.received(tp, 21n);
    committer.received(tp, 22n);
    committer.settled(tp, 22n); // 21 settled
    committer.settled(tp, 23n); // 22 settled
    expect(await committed()).toBe('20');
    committer.settled(tp, 21n); // 20 settled
    expect(await committed()).toBe('23');
  });

  it('a record given back (held, not settled) and delivered again keeps the position at it', async () => {
    const { committer, committed } = recording();
    handle(committer, [0, 1]);
    committer.received(tp, 2n); // not due yet: the runner seeks back to 2 without settling it
    committer.received(tp, 2n); // delivered again
    expect(await committed()).toBe('2');
    committer.settled(tp, 3n);
    expect(await committed()).toBe('3');
  });

  it('a redelivery from further back never moves the committed position backwards', async () => {
    const { committer, requests, committed } = recording();
    handle(committer, [0, 1, 2, 3]);
    expect(await committed()).toBe('4');
    const before = requests.length;
    handle(committer, [1, 2]); // e.g. a rejoin restarting at an older offset
    await committer.flush();
    expect(requests.length).toBe(before);
    handle(committer, [3, 4]);
    expect(await committed()).toBe('5');
  });

  it('a settle never reported as received still cannot pass a hole', async () => {
    const { committer, committed } = recording();
    committer.settled(tp, 8n); // offset 7
    committer.settled(tp, 20n); // offset 19: ahead of 8, never seen
    expect(await committed()).toBe('8');
  });

  it('forget() starts a partition afresh at the next record received', async () => {
    const { committer, committed } = recording();
    handle(committer, [0, 1]);
    committer.forget([tp]);
    expect(committer.position(tp)).toBeUndefined();
    expect(handle(committer, [30])).toEqual([undefined]);
    expect(await committed()).toBe('31');
  });

  it('a failed commit stays pending and goes out again', async () => {
    const requests: KafkaCommitOffset[][] = [];
    let fail = true;
    const errors: unknown[] = [];
    const committer = new OffsetCommitter({
      commit: async (offsets) => {
        requests.push([...offsets]);
        if (fail) throw new Error('coordinator moved');
      },
      onError: (error) => errors.push(error),
      retryDelayMs: 10,
    });
    handle(committer, [0]);
    await committer.flush();
    expect(errors.length).toBeGreaterThan(0);
    fail = false;
    await committer.flush();
    expect(committer.pendingCount).toBe(0);
    expect(requests.at(-1)).toEqual([{ ...tp, offset: '1' }]);
    committer.close();
  });

  /**
   * A fake group coordinator: stores each request's offsets when the request completes, so a
   * request held back and released later overwrites what newer requests stored (as a commit the
   * client sends again after rejoining the group does).
   */
  function coordinator() {
    const stored = new Map<number, string>();
    const held: { offsets: KafkaCommitOffset[]; release: () => void }[] = [];
    let holdNext = 0;
    let failNext = 0;
    const commit = (offsets: readonly KafkaCommitOffset[]) => {
      const store = () => {
        for (const o of offsets) stored.set(o.partition, o.offset);
      };
      if (failNext > 0) {
        failNext--;
        return Promise.reject(new Error('REBALANCE_IN_PROGRESS'));
      }
      if (holdNext > 0) {
        holdNext--;
        return new Promise<void>((resolve) =>
          held.push({
            offsets: [...offsets],
            release: () => {
              store();
              resolve();
            },
          }),
        );
      }
      store();
      return Promise.resolve();
    };
    return {
      stored,
      held,
      commit,
      hold: (n: number) => (holdNext = n),
      fail: (n: number) => (failNext = n),
    };
  }

  const until = async (condition: () => boolean, what: string) => {
    for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
    if (!condition()) throw new Error(`never: ${what}`);
  };

  it('a timed-out commit the client stores late (older offsets) is followed by the highest settled position', async () => {
    const broker = coordinator();
    const committer = new OffsetCommitter({
      commit: broker.commit,
      timeoutMs: 20,
      retryDelayMs: 5,
      refreshMs: 0,
    });
    broker.hold(1);
    handle(committer, [0, 1, 2]); // position 3, its request hangs (a rebalance)
    await until(() => broker.held.length === 1, 'the request is out');
    await committer.flush(); // times out; the retry and the records after it are stored
    handle(committer, [3, 4]);
    await committer.flush();
    await until(() => broker.stored.get(tp.partition) === '5', 'position 5 stored');
    // The abandoned request goes through now, after the newer one: the group's offset goes back.
    broker.held[0]!.release();
    expect(broker.stored.get(tp.partition)).toBe(broker.held[0]!.offsets[0]!.offset);
    // No new record arrives; the committer still puts the highest settled position back.
    await until(() => broker.stored.get(tp.partition) === '5', 'position 5 stored again');
    committer.close();
  });

  it('flush() waits at most timeoutMs in all, and after close() no request starts', async () => {
    vi.useFakeTimers();
    try {
      const requests: KafkaCommitOffset[][] = [];
      const errors: string[] = [];
      const committer = new OffsetCommitter({
        // Every request hangs, as a commit does while the group rebalances.
        commit: (offsets) => {
          requests.push([...offsets]);
          return new Promise<void>(() => undefined);
        },
        onError: (error) => errors.push(String(error)),
        timeoutMs: 10_000,
        retryDelayMs: 1_000,
        refreshMs: 5_000,
      });
      handle(committer, [0, 1, 2]);
      expect(requests).toHaveLength(1);
      // The stop comes 4 s into the hanging request. Waiting for it (6 s more) and then for a
      // retry of its positions (10 s more) would take 16 s.
      await vi.advanceTimersByTimeAsync(4_000);
      let flushed = false;
      const flushing = committer.flush().then(() => (flushed = true));
      await vi.advanceTimersByTimeAsync(9_999);
      expect(flushed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(flushed).toBe(true);
      await flushing;
      expect(errors.some((error) => error.includes('offset commit flush'))).toBe(true);
      committer.close();
      const started = requests.length;
      // Closed: neither the retry of the pending positions nor a refresh starts a request.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(requests).toHaveLength(started);
    } finally {
      vi.useRealTimers();
    }
  });

  it('every held position is committed again every refreshMs (another member rolled one back)', async () => {
    const broker = coordinator();
    const committer = new OffsetCommitter({ commit: broker.commit, refreshMs: 20 });
    handle(committer, [7, 8]);
    await committer.flush();
    expect(broker.stored.get(tp.partition)).toBe('9');
    broker.stored.set(tp.partition, '4'); // a late commit by the partition's previous owner
    await until(() => broker.stored.get(tp.partition) === '9', 'position 9 stored again');
    committer.close();
    // Closed: nothing is refreshed any more.
    broker.stored.set(tp.partition, '4');
    await new Promise((r) => setTimeout(r, 60));
    expect(broker.stored.get(tp.partition)).toBe('4');
  });

  it('a kept partition keeps its pending position when its commit fails in a rebalance and another partition is revoked', async () => {
    const broker = coordinator();
    const other = { topic: 'orders', partition: 4 };
    const committer = new OffsetCommitter({
      commit: broker.commit,
      retryDelayMs: 5,
      refreshMs: 0,
    });
    committer.received(other, 0n);
    committer.settled(other, 1n);
    await committer.flush();
    broker.fail(3); // the rebalance: three requests refused
    handle(committer, [10, 11]);
    await committer.flush();
    committer.forget([other]); // revoked in that rebalance; tp is kept
    await until(() => broker.stored.get(tp.partition) === '12', 'the kept position stored');
    expect(committer.pendingCount).toBe(0);
    committer.close();
  });

  it('never commits past an unsettled record, whatever fails, times out or lands late', async () => {
    const broker = coordinator();
    const committer = new OffsetCommitter({
      commit: broker.commit,
      timeoutMs: 10,
      retryDelayMs: 2,
      refreshMs: 15,
    });
    const seen: string[] = [];
    const observe = () => seen.push(broker.stored.get(tp.partition) ?? '-');
    broker.hold(2);
    committer.received(tp, 0n);
    committer.received(tp, 1n);
    committer.received(tp, 2n);
    committer.settled(tp, 1n);
    committer.settled(tp, 3n); // 2 settled, 1 open
    broker.fail(2);
    await new Promise((r) => setTimeout(r, 80));
    observe();
    for (const h of broker.held) h.release();
    await new Promise((r) => setTimeout(r, 40));
    observe();
    expect(seen.every((offset) => offset === '-' || offset === '1')).toBe(true);
    committer.settled(tp, 2n);
    await until(() => broker.stored.get(tp.partition) === '3', 'position 3 stored');
    committer.close();
  });
  it('with minIntervalMs, positions settled while records flow ride on one request per interval; a flush does not wait', async () => {
    let clock = 1_000;
    const timers: { at: number; run: () => void }[] = [];
    const requests: KafkaCommitOffset[][] = [];
    const committer = new OffsetCommitter({
      commit: async (offsets) => {
        requests.push([...offsets]);
      },
      minIntervalMs: 100,
      now: () => clock,
      refreshMs: 0,
      timers: {
        setTimeout: (run, ms) => {
          const timer = { at: clock + ms, run };
          timers.push(timer);
          return timer;
        },
        clearTimeout: (timer) => timers.splice(timers.indexOf(timer as never), 1),
      },
    });
    const settle = async (offset: number) => {
      handle(committer, [offset]);
      await new Promise((r) => setImmediate(r)); // the request (if any) is answered
    };
    // After a quiet spell the first settled record goes out at once.
    await settle(0);
    expect(requests).toEqual([[{ ...tp, offset: '1' }]]);
    // Ten more within the interval: no request until it has passed, then one with the latest.
    for (let offset = 1; offset <= 10; offset++) {
      clock += 5;
      await settle(offset);
    }
    expect(requests).toHaveLength(1);
    expect(timers).toHaveLength(1);
    expect(timers[0]!.at).toBe(1_100);
    clock = 1_100;
    timers.shift()!.run();
    await new Promise((r) => setImmediate(r));
    expect(requests).toEqual([[{ ...tp, offset: '1' }], [{ ...tp, offset: '11' }]]);
    // Settled again within the next interval: a flush (stop) sends it now.
    clock += 10;
    await settle(11);
    expect(requests).toHaveLength(2);
    await committer.flush();
    expect(requests.at(-1)).toEqual([{ ...tp, offset: '12' }]);
    expect(timers).toHaveLength(0);
    committer.close();
  });
});
