/**
 * The offset committer's invariant, with a recording fake of the commit request (pure logic): the
 * committed position never passes a record that was not received and settled, whatever order or
 * holes the client delivers records in.
 */
import { describe, expect, it } from 'vitest';
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
});
