import { describe, expect, it } from 'vitest';
import {
  PartitionScheduler,
  partitionKey,
  type PartitionSchedulerOptions,
  type RecordOutcome,
  type SchedulableRecord,
  type TopicPartition,
} from '../../src/runtime/kafka/consumer/partition-scheduler.js';

interface TestRecord extends SchedulableRecord {
  readonly notBefore?: number;
}

const rec = (topic: string, partition: number, offset: number, notBefore?: number): TestRecord => ({
  topic,
  partition,
  offset: BigInt(offset),
  ...(notBefore !== undefined ? { notBefore } : {}),
});
const label = (r: SchedulableRecord) => `${r.topic}:${r.partition}@${r.offset}`;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function harness(
  handle: PartitionSchedulerOptions<TestRecord>['handle'],
  extra: Partial<PartitionSchedulerOptions<TestRecord>> = {},
) {
  const committed = new Map<string, bigint>();
  const log: string[] = [];
  const scheduler = new PartitionScheduler<TestRecord>({
    handle,
    notBefore: (r) => r.notBefore,
    committable: (tp, offset) => {
      const key = partitionKey(tp);
      const previous = committed.get(key);
      if (previous !== undefined && offset <= previous)
        throw new Error(`commit went backwards on ${key}`);
      committed.set(key, offset);
    },
    pause: (tp: TopicPartition) => log.push(`pause ${partitionKey(tp)}`),
    resume: (tp: TopicPartition) => log.push(`resume ${partitionKey(tp)}`),
    settleBackoff: { baseMs: 5, capMs: 20 },
    ...extra,
  });
  return { scheduler, committed, log };
}

const settled: RecordOutcome = { kind: 'settled' };

describe('PartitionScheduler', () => {
  it('handles each partition in offset order, one record at a time, and partitions concurrently', async () => {
    const started: string[] = [];
    let running = new Map<string, number>();
    let maxAcross = 0;
    const { scheduler, committed } = harness(async (r) => {
      const key = partitionKey(r);
      running.set(key, (running.get(key) ?? 0) + 1);
      expect(running.get(key)).toBe(1); // never two records of one partition at once
      maxAcross = Math.max(
        maxAcross,
        [...running.values()].reduce((a, b) => a + b, 0),
      );
      started.push(label(r));
      await delay(5 + Math.random() * 10);
      running.set(key, running.get(key)! - 1);
      return settled;
    });
    const records = [0, 1, 2].flatMap((p) => [0, 1, 2, 3, 4].map((o) => rec('t', p, o)));
    scheduler.enqueue(records);
    await scheduler.idle();
    for (const p of [0, 1, 2]) {
      expect(started.filter((s) => s.startsWith(`t:${p}@`))).toEqual(
        [0, 1, 2, 3, 4].map((o) => `t:${p}@${o}`),
      );
      expect(committed.get(`t:${p}`)).toBe(5n);
    }
    expect(maxAcross).toBe(3);
  });

  it('limits records in flight across partitions to `concurrency`', async () => {
    let running = 0;
    let max = 0;
    const { scheduler } = harness(
      async () => {
        max = Math.max(max, ++running);
        await delay(5);
        running--;
        return settled;
      },
      { concurrency: 2 },
    );
    scheduler.enqueue([0, 1, 2, 3, 4].map((p) => rec('t', p, 0)));
    await scheduler.idle();
    expect(max).toBe(2);
  });

  it('waits for a record that is not due with its partition paused, while other partitions go on', async () => {
    const order: string[] = [];
    const { scheduler, log, committed } = harness(async (r) => {
      order.push(label(r));
      return settled;
    });
    const due = Date.now() + 120;
    scheduler.enqueue([rec('retry', 0, 0, due), rec('retry', 0, 1, due), rec('main', 0, 0)]);
    await delay(40);
    expect(order).toEqual(['main:0@0']); // the other partition did not wait
    expect(log).toEqual(['pause retry:0']);
    expect(committed.get('retry:0')).toBeUndefined();
    await scheduler.idle();
    expect(order).toEqual(['main:0@0', 'retry:0@0', 'retry:0@1']);
    expect(log).toEqual(['pause retry:0', 'resume retry:0']);
    expect(committed.get('retry:0')).toBe(2n);
  });

  it('retries in place after the asked delay, counting the retries, before moving on', async () => {
    const calls: string[] = [];
    const { scheduler, log, committed } = harness(async (r, ctx) => {
      calls.push(`${label(r)}#${ctx.retriesInPlace}`);
      if (r.offset === 0n && ctx.retriesInPlace < 2) return { kind: 'retry-in-place', delayMs: 10 };
      return settled;
    });
    scheduler.enqueue([rec('s', 0, 0), rec('s', 0, 1)]);
    await scheduler.idle();
    expect(calls).toEqual(['s:0@0#0', 's:0@0#1', 's:0@0#2', 's:0@1#0']);
    expect(log).toEqual(['pause s:0', 'resume s:0', 'pause s:0', 'resume s:0']);
    expect(committed.get('s:0')).toBe(2n);
  });

  it('keeps a record whose handle threw at the head of its partition and tries it again (never skipped)', async () => {
    let failures = 2;
    const reported: string[] = [];
    const calls: string[] = [];
    const { scheduler, committed } = harness(
      async (r, ctx) => {
        calls.push(`${label(r)}#${ctx.retriesInPlace}`);
        if (r.offset === 0n && failures-- > 0) throw new Error('dead letter not acknowledged');
        return settled;
      },
      {
        onSettleFailure: (r, error, ms) =>
          reported.push(`${label(r)} ${(error as Error).message} ${ms}`),
      },
    );
    scheduler.enqueue([rec('t', 0, 0), rec('t', 0, 1)]);
    await scheduler.idle();
    // A settle failure is not a handling attempt: retriesInPlace stays 0.
    expect(calls).toEqual(['t:0@0#0', 't:0@0#0', 't:0@0#0', 't:0@1#0']);
    expect(reported).toEqual([
      't:0@0 dead letter not acknowledged 5',
      't:0@0 dead letter not acknowledged 10',
    ]);
    expect(committed.get('t:0')).toBe(2n);
  });

  it('pauses fetching when too many records are queued and resumes once half are handled', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { scheduler, log } = harness(
      async () => {
        await gate;
        return settled;
      },
      { maxQueued: 4 },
    );
    scheduler.enqueue([0, 1, 2, 3].map((o) => rec('t', 0, o)));
    expect(log).toEqual(['pause t:0']);
    release();
    await scheduler.idle();
    expect(log).toEqual(['pause t:0', 'resume t:0']);
  });

  it('on revocation drops queued records uncommitted and lets the record in flight finish', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    const { scheduler, committed } = harness(async (r) => {
      if (r.topic === 't' && r.offset === 0n) await gate;
      handled.push(label(r));
      return settled;
    });
    scheduler.enqueue([rec('t', 0, 0), rec('t', 0, 1), rec('t', 0, 2), rec('u', 0, 0)]);
    await delay(10);
    const revoked = scheduler.revoke([{ topic: 't', partition: 0 }]);
    setTimeout(release, 20);
    await revoked;
    expect(handled).toEqual(['u:0@0', 't:0@0']); // 1 and 2 dropped
    expect(committed.get('t:0')).toBe(1n); // the finished in-flight record is committable
    expect(scheduler.partitions().map((p) => partitionKey(p))).toEqual(['u:0']);
    // Re-assigned later: the partition starts again from what is fetched anew.
    scheduler.enqueue([rec('t', 0, 1)]);
    await scheduler.idle();
    expect(handled).toEqual(['u:0@0', 't:0@0', 't:0@1']);
  });

  it('abandons an in-flight record past the revocation timeout and never reports it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const { scheduler, committed } = harness(async () => {
      await gate;
      finished = true;
      return settled;
    });
    scheduler.enqueue([rec('t', 0, 0)]);
    await delay(5);
    await scheduler.revoke([{ topic: 't', partition: 0 }], 20);
    release();
    await delay(10);
    expect(finished).toBe(true);
    expect(committed.has('t:0')).toBe(false);
  });

  it('ends waits at once on revocation (a paused partition never holds up a rebalance)', async () => {
    const { scheduler } = harness(async () => settled);
    scheduler.enqueue([rec('r', 0, 0, Date.now() + 60_000)]);
    const started = Date.now();
    await scheduler.revokeAll(5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(scheduler.outstanding).toBe(0);
  });
});
