/**
 * Runs fetched records: one at a time and in offset order within a partition, different
 * partitions concurrently (up to `concurrency` records at once). Nothing here sleeps inside a
 * handler: a record that is not due yet (a retry copy waiting out its delay) or that is retried in
 * place (strict ordering) makes its partition wait with fetching paused, while every other
 * partition goes on.
 *
 * Offsets: every settled record advances the partition's committable offset (last contiguous
 * settled offset + 1) and reports it; the caller commits it. A record whose `handle` throws has
 * not been settled (its retry copy or dead letter was not acknowledged, say): it stays at the
 * head of its partition and is tried again after a backoff, so no record is ever skipped.
 *
 * Revocation (rebalance, stop): queued records are dropped without commit (the next owner reads
 * them from the committed offset), waits end at once, and the record in flight may finish within
 * a timeout; past it the record is abandoned and its outcome never reported as committable.
 */
import { backoffDelayMs } from '../../outbox/backoff.js';
import { PartitionProgress } from './partition-progress.js';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface SchedulableRecord extends TopicPartition {
  readonly offset: bigint;
}

/** What handling a record came to. */
export type RecordOutcome =
  /** Handled, duplicate, forwarded to a retry topic or dead-lettered: the offset may move past it. */
  | { readonly kind: 'settled' }
  /** Try the same record again after `delayMs`, the partition waiting (strict ordering). */
  | { readonly kind: 'retry-in-place'; readonly delayMs: number };

export interface HandleContext {
  /** How often this record was already retried in place (0 on its first run here). */
  readonly retriesInPlace: number;
}

export interface SchedulerClock {
  now(): number;
  /** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface PartitionSchedulerOptions<R extends SchedulableRecord> {
  /** Settles one record; throwing means "not settled, try again later". */
  handle(record: R, context: HandleContext): Promise<RecordOutcome>;
  /** Epoch ms before which a record must not be handled (a retry copy's due time). */
  notBefore?(record: R): number | undefined;
  /** The partition's committable offset moved to `offset`. */
  committable(tp: TopicPartition, offset: bigint): void;
  /** Stop fetching this partition (too many records queued, or the head record waits). */
  pause(tp: TopicPartition): void;
  /** Fetch this partition again. */
  resume(tp: TopicPartition): void;
  /** Fetching pauses when this many records of a partition are queued. Default 200. */
  readonly maxQueued?: number;
  /** Records handled at once across partitions. Default 16. */
  readonly concurrency?: number;
  /** Backoff before a record whose `handle` threw is tried again. */
  readonly settleBackoff?: { readonly baseMs: number; readonly capMs: number };
  /** `handle` threw; the record will be tried again after `delayMs`. */
  onSettleFailure?(record: R, error: unknown, delayMs: number): void;
  readonly clock?: SchedulerClock;
}

export interface PartitionView extends TopicPartition {
  readonly queued: number;
  readonly inFlight: boolean;
  readonly paused: boolean;
  readonly committableOffset: bigint | undefined;
}

type PauseReason = 'backpressure' | 'waiting';

interface PartitionState<R> {
  readonly tp: TopicPartition;
  readonly queue: R[];
  readonly progress: PartitionProgress;
  readonly pausedFor: Set<PauseReason>;
  readonly stopWaiting: AbortController;
  running: Promise<void> | undefined;
  inFlight: boolean;
  revoked: boolean;
  /** Revoked and given up on: a late outcome is not reported. */
  abandoned: boolean;
}

export const realClock: SchedulerClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

export function partitionKey(tp: TopicPartition): string {
  // Kafka topic names never contain ':'.
  return `${tp.topic}:${tp.partition}`;
}

/** A counting semaphore: at most `limit` holders at once, served in arrival order. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.used < this.limit) {
      this.used++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.used--;
  }
}

export class PartitionScheduler<R extends SchedulableRecord> {
  private readonly states = new Map<string, PartitionState<R>>();
  private readonly slots: Slots;
  private readonly maxQueued: number;
  private readonly clock: SchedulerClock;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: PartitionSchedulerOptions<R>) {
    this.maxQueued = options.maxQueued ?? 200;
    const concurrency = options.concurrency ?? 16;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError('concurrency must be a positive integer');
    if (!Number.isInteger(this.maxQueued) || this.maxQueued < 1)
      throw new RangeError('maxQueued must be a positive integer');
    this.slots = new Slots(concurrency);
    this.clock = options.clock ?? realClock;
  }

  /** Queues fetched records (each partition's in offset order) and starts their partitions. */
  enqueue(records: readonly R[]): void {
    for (const record of records) {
      const state = this.stateFor(record);
      state.progress.received(record.offset);
      state.queue.push(record);
      if (state.queue.length >= this.maxQueued) this.pauseFor(state, 'backpressure');
      if (state.running === undefined) this.start(state);
    }
  }

  /**
   * Gives partitions up: drops their queued records, ends their waits, lets the record in flight
   * finish for up to `timeoutMs` (then abandons it). Resolves when each is finished or abandoned;
   * offsets settled meanwhile have been reported through `committable`.
   */
  async revoke(tps: readonly TopicPartition[], timeoutMs = 10_000): Promise<void> {
    const revoked: PartitionState<R>[] = [];
    for (const tp of tps) {
      const state = this.states.get(partitionKey(tp));
      if (state === undefined) continue;
      this.states.delete(partitionKey(tp));
      state.revoked = true;
      state.queue.length = 0;
      state.stopWaiting.abort();
      revoked.push(state);
    }
    const running = revoked.flatMap((state) =>
      state.running === undefined ? [] : [state.running],
    );
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([Promise.allSettled(running), timedOut]);
      clearTimeout(timer);
    }
    for (const state of revoked) if (state.running !== undefined) state.abandoned = true;
    this.notifyIdle();
  }

  /** Revokes every partition (see `revoke`). */
  async revokeAll(timeoutMs?: number): Promise<void> {
    await this.revoke(
      [...this.states.values()].map((state) => state.tp),
      timeoutMs,
    );
  }

  /** Partitions the scheduler holds records or work for. */
  partitions(): PartitionView[] {
    return [...this.states.values()].map((state) => ({
      topic: state.tp.topic,
      partition: state.tp.partition,
      queued: state.queue.length,
      inFlight: state.inFlight,
      paused: state.pausedFor.size > 0,
      committableOffset: state.progress.committableOffset,
    }));
  }

  /** Records queued or in flight across partitions. */
  get outstanding(): number {
    let count = 0;
    for (const state of this.states.values()) count += state.queue.length;
    return count;
  }

  /** Resolves when no partition has queued or in-flight records. */
  async idle(): Promise<void> {
    while (this.outstanding > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  private stateFor(tp: TopicPartition): PartitionState<R> {
    const key = partitionKey(tp);
    let state = this.states.get(key);
    if (state === undefined) {
      state = {
        tp: { topic: tp.topic, partition: tp.partition },
        queue: [],
        progress: new PartitionProgress(),
        pausedFor: new Set(),
        stopWaiting: new AbortController(),
        running: undefined,
        inFlight: false,
        revoked: false,
        abandoned: false,
      };
      this.states.set(key, state);
    }
    return state;
  }

  private start(state: PartitionState<R>): void {
    state.running = this.drain(state).finally(() => {
      state.running = undefined;
      this.notifyIdle();
    });
  }

  private notifyIdle(): void {
    if (this.outstanding > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private pauseFor(state: PartitionState<R>, reason: PauseReason): void {
    if (state.revoked) return;
    const wasPaused = state.pausedFor.size > 0;
    state.pausedFor.add(reason);
    if (!wasPaused) this.options.pause(state.tp);
  }

  private resumeFrom(state: PartitionState<R>, reason: PauseReason): void {
    if (!state.pausedFor.delete(reason) || state.revoked) return;
    if (state.pausedFor.size === 0) this.options.resume(state.tp);
  }

  private async waitFor(state: PartitionState<R>, ms: number): Promise<void> {
    this.pauseFor(state, 'waiting');
    await this.clock.sleep(ms, state.stopWaiting.signal);
    this.resumeFrom(state, 'waiting');
  }

  private async drain(state: PartitionState<R>): Promise<void> {
    let retriesInPlace = 0;
    let settleFailures = 0;
    while (!state.revoked && state.queue.length > 0) {
      const record = state.queue[0]!;
      const due = this.options.notBefore?.(record);
      const wait = due === undefined ? 0 : due - this.clock.now();
      if (wait > 0) {
        await this.waitFor(state, wait);
        continue;
      }
      let outcome: RecordOutcome | undefined;
      let settleDelayMs = 0;
      await this.slots.acquire();
      state.inFlight = true;
      try {
        outcome = await this.options.handle(record, { retriesInPlace });
        settleFailures = 0;
      } catch (error) {
        // Not settled (not a handling attempt either): the same record again after a backoff.
        settleFailures++;
        settleDelayMs = backoffDelayMs(settleFailures, {
          baseMs: 100,
          capMs: 5_000,
          ...this.options.settleBackoff,
          jitterMs: 0,
        });
        this.options.onSettleFailure?.(record, error, settleDelayMs);
      } finally {
        state.inFlight = false;
        this.slots.release();
      }
      if (state.abandoned) return;
      if (outcome === undefined || outcome.kind === 'retry-in-place') {
        if (outcome !== undefined) retriesInPlace++;
        if (state.revoked) return;
        await this.waitFor(state, outcome?.delayMs ?? settleDelayMs);
        continue;
      }
      retriesInPlace = 0;
      // After a revocation the queue is already empty; the settled record is still reported.
      if (!state.revoked) state.queue.shift();
      const moved = state.progress.done(record.offset);
      if (moved !== undefined) this.options.committable(state.tp, moved);
      if (state.queue.length < this.maxQueued / 2) this.resumeFrom(state, 'backpressure');
    }
  }
}
