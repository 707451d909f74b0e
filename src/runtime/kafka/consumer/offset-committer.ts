/**
 * Commits consumed positions without a round trip per record, and never past a record that is not
 * settled.
 *
 * The runner tells the committer about every record the client hands it (`received`) and about
 * every record it settled (`settled`: its inbox transaction committed, or its retry copy or dead
 * letter was acknowledged). Per partition the committer knows which offset it expects next; the
 * commit position is the lowest offset that is received and not settled, or the expected one:
 * every record below it was seen and settled. A record further ahead than expected means the
 * client skipped something (a rebalance that dropped fetched records, a stale fetch after a seek):
 * `received` answers with the offset to seek back to, and the position stays below the hole. Only
 * when the same record comes first again after that seek are the offsets in between taken as not
 * existing (compaction, transaction markers). A record behind the expected one is a redelivery
 * (seek back, rejoin): the position never moves backwards, and moves on once the redelivered
 * records are settled again. So whatever the client or a rebalance does, the group's offset
 * never passes an unsettled record.
 *
 * Pending positions go out in ONE request, with at most one request in flight: positions settled
 * meanwhile ride on the next request. With `minIntervalMs` (the runner's `commitIntervalMs`) two
 * requests also start at least that far apart, so a steady stream costs the broker one request per
 * interval instead of one per record or two (measured: 0.3–0.8 per record at 500 records/s). A
 * failed commit keeps its positions pending and is tried again (after `retryDelayMs`, or with the
 * next settled record); a crash in between only means redelivery of settled records, which the
 * inbox absorbs.
 *
 * A commit that timed out is not necessarily dead: a client may still send it later (the
 * @platformatic/kafka client answers a rebalance error by rejoining the group and committing the
 * same offsets again, possibly after a newer commit stored a higher position). Such a late
 * commit moves the group's offset BACK, and with no new record nothing would move it forward
 * again. So when a timed-out request finally settles, the current positions of its partitions go
 * out once more; and every `refreshMs` every position this member holds is committed again (as
 * the Java client's auto-commit does), which also repairs a rollback of a partition this member
 * owns that another member's late commit caused. Both only repeat settled positions: neither can
 * pass an unsettled record.
 */
import { REAL_RUNNER_TIMERS, type RunnerTimers } from '../../delivery/runner-timers.js';
import type { KafkaCommitOffset, KafkaTopicPartition } from '../kafka-client.js';
import { KafkaTimeoutError, withTimeout } from '../send-timeout.js';

interface OffsetCommitterOptions {
  /** Stores positions (next offset to read) for the group. */
  commit(offsets: readonly KafkaCommitOffset[]): Promise<void>;
  /** A commit failed; its positions stay pending. */
  onError?(error: unknown, offsets: readonly KafkaCommitOffset[]): void;
  /** Delay before a failed commit is tried again without new records. Default 1000 ms. */
  readonly retryDelayMs?: number;
  /**
   * A commit request not answered within this long counts as failed (default 10 000 ms), so a
   * request stuck in a client (e.g. one that rejoins the group before committing) never holds up
   * the positions settled after it.
   */
  readonly timeoutMs?: number;
  /**
   * Every held position is committed again this often (default 5 000 ms; 0 = never), so a late
   * commit that rolled the group's offset back is repaired without a new record.
   */
  readonly refreshMs?: number;
  /**
   * At least this long between the starts of two requests while positions keep settling
   * (default 0: the next request starts as soon as the one before is answered). A position
   * settled after a quiet spell still goes out at once; under a steady stream the positions
   * settled in between ride on one request. Flushes (stop) never wait for it.
   */
  readonly minIntervalMs?: number;
  /** Clock of `minIntervalMs`, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Timers of the retries and refreshes (the runner's `timers` seam). Default: the process's. */
  readonly timers?: RunnerTimers | undefined;
}

/** A process timer must not keep the process alive for a commit retry or refresh alone. */
function unref(handle: unknown): unknown {
  (handle as { unref?: () => void } | undefined)?.unref?.();
  return handle;
}

/** What the committer knows of one partition since it was (re)assigned. */
interface PartitionTrack {
  /** The offset the client should deliver next (after the last record received). */
  next: bigint;
  /** Received, not settled yet. */
  readonly open: Set<bigint>;
  /** A hole seen once: `expected` was due, `seen` came; the caller was told to seek back. */
  hole: { readonly expected: bigint; readonly seen: bigint } | undefined;
}

const key = (tp: KafkaTopicPartition) => `${tp.topic}:${tp.partition}`;

export class OffsetCommitter {
  private readonly tracks = new Map<string, PartitionTrack>();
  /** Highest commit position per partition since the partition was (re)assigned. */
  private readonly positions = new Map<string, KafkaCommitOffset>();
  /** Positions not yet stored by the broker. */
  private readonly pending = new Map<string, KafkaCommitOffset>();
  private running: Promise<void> | undefined;
  private retryTimer: unknown;
  private refreshTimer: unknown;
  /** Waits out `minIntervalMs` since the last request started. */
  private intervalTimer: unknown;
  private lastStartAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private committedCount = 0;
  private holeCount = 0;

  private readonly timers: RunnerTimers;
  private readonly now: () => number;

  constructor(private readonly options: OffsetCommitterOptions) {
    this.timers = options.timers ?? REAL_RUNNER_TIMERS;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The client handed over the record at `offset`. Returns undefined when it is the expected one
   * (or a redelivery); else the offset the partition must be sought back to: the records in
   * between were skipped, and this record is not tracked (it comes again after the seek).
   */
  received(tp: KafkaTopicPartition, offset: bigint): bigint | undefined {
    const k = key(tp);
    const track = this.tracks.get(k);
    if (track === undefined) {
      // The first record after an assignment: the client starts at the group's offset.
      this.tracks.set(k, { next: offset + 1n, open: new Set([offset]), hole: undefined });
      return undefined;
    }
    if (offset > track.next) {
      const hole = track.hole;
      if (hole === undefined || hole.expected !== track.next || hole.seen !== offset) {
        // First sight: ask for the expected record again before believing it does not exist.
        track.hole = { expected: track.next, seen: offset };
        this.holeCount++;
        return track.next;
      }
    }
    if (offset < track.next) {
      // Delivered again from here on: what was open at or after it comes again too.
      for (const open of track.open) if (open >= offset) track.open.delete(open);
    }
    track.hole = undefined;
    track.next = offset + 1n;
    track.open.add(offset);
    return undefined;
  }

  /**
   * Records that the record before `offset` (the next offset to read) of `tp` is settled. The
   * commit position moves up to the first received record that is not settled.
   */
  settled(tp: KafkaTopicPartition, offset: bigint): void {
    const k = key(tp);
    const recordOffset = offset - 1n;
    let track = this.tracks.get(k);
    if (track === undefined || (recordOffset >= track.next && !track.open.has(recordOffset))) {
      // Never reported as received: take it as received now (holes still block the position).
      if (this.received(tp, recordOffset) !== undefined) return;
      track = this.tracks.get(k)!;
    }
    track.open.delete(recordOffset);
    let frontier = track.next;
    for (const open of track.open) if (open < frontier) frontier = open;
    const previous = this.positions.get(k);
    if (previous !== undefined && BigInt(previous.offset) >= frontier) return;
    const position = { topic: tp.topic, partition: tp.partition, offset: frontier.toString() };
    this.positions.set(k, position);
    this.pending.set(k, position);
    this.startRefresh();
    this.kick();
  }

  /** The commit position of `tp` (every record before it is settled), if any. */
  position(tp: KafkaTopicPartition): bigint | undefined {
    const position = this.positions.get(key(tp));
    return position === undefined ? undefined : BigInt(position.offset);
  }

  /** Commit requests the broker acknowledged. */
  get commits(): number {
    return this.committedCount;
  }

  /** Records that came ahead of the expected offset (a seek back was asked for). */
  get holes(): number {
    return this.holeCount;
  }

  /** Positions settled but not stored yet. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Commits what is pending now and resolves when the broker stored it (or the attempt failed;
   * see `onError`). Resolves at once when nothing is pending. Waits at most `timeoutMs` in all
   * (the runner's stop awaits it): a request held up by a rebalance, and the retry of its
   * positions after it timed out, do not add up. What is not stored by then is reported to
   * `onError`; the next owner of those partitions reads those records again.
   */
  async flush(): Promise<void> {
    const flushing = (async () => {
      while (this.running !== undefined) await this.running;
      if (this.pending.size > 0 && !this.closed) await this.start();
    })();
    try {
      await withTimeout(flushing, this.options.timeoutMs ?? 10_000, 'offset commit flush');
    } catch (error) {
      this.reportError(error, [...this.pending.values()]);
    }
  }

  /**
   * Forgets partitions (revoked, or assigned afresh): their pending positions are dropped, and
   * the next record received starts them again from whatever the group has committed.
   */
  forget(tps: readonly KafkaTopicPartition[]): void {
    for (const tp of tps) {
      this.tracks.delete(key(tp));
      this.positions.delete(key(tp));
      this.pending.delete(key(tp));
    }
  }

  /**
   * Stops retry and refresh timers (the runner is stopping); no request starts after this, even
   * when one still in flight fails or leaves positions pending.
   */
  close(): void {
    this.closed = true;
    this.clearRetry();
    this.clearInterval();
    if (this.refreshTimer !== undefined) this.timers.clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
  }

  private startRefresh(): void {
    const every = this.options.refreshMs ?? 5_000;
    if (this.refreshTimer !== undefined || this.closed || every <= 0) return;
    // A chain of timeouts (the timers seam has no interval), one pending at a time.
    const tick = () => {
      this.refreshTimer = unref(this.timers.setTimeout(tick, every));
      this.recommit(this.positions.keys());
    };
    this.refreshTimer = unref(this.timers.setTimeout(tick, every));
  }

  private reportError(error: unknown, offsets: readonly KafkaCommitOffset[]): void {
    try {
      this.options.onError?.(error, offsets);
    } catch {
      // An observer must not break committing.
    }
  }

  private clearRetry(): void {
    if (this.retryTimer !== undefined) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private clearInterval(): void {
    if (this.intervalTimer !== undefined) this.timers.clearTimeout(this.intervalTimer);
    this.intervalTimer = undefined;
  }

  /** Puts the current positions of these partitions (those still held) up for commit again. */
  private recommit(keys: Iterable<string>): void {
    if (this.closed) return;
    for (const k of keys) {
      const position = this.positions.get(k);
      if (position !== undefined && !this.pending.has(k)) this.pending.set(k, position);
    }
    // A retry already scheduled takes them along.
    if (this.retryTimer === undefined) this.kick();
  }

  private kick(): void {
    if (this.closed || this.running !== undefined || this.pending.size === 0) return;
    if (this.intervalTimer !== undefined) return;
    const interval = this.options.minIntervalMs ?? 0;
    // Capped: a clock set back never stretches the wait beyond one interval.
    const wait = interval <= 0 ? 0 : Math.min(interval, this.lastStartAt + interval - this.now());
    // The request never rejects (failures go to onError and back into pending).
    if (wait <= 0) void this.start();
    else
      this.intervalTimer = unref(
        this.timers.setTimeout(() => {
          this.intervalTimer = undefined;
          // The timer decides, not the clock: a clock standing still (tests) delays nothing more.
          if (this.running === undefined && this.pending.size > 0) void this.start();
        }, wait),
      );
  }

  /** Sends what is pending; returns the request, also kept in `running` until it settles. */
  private start(): Promise<void> {
    this.clearRetry();
    this.clearInterval();
    this.lastStartAt = this.now();
    const batch = [...this.pending.values()];
    this.pending.clear();
    const request = this.options.commit(batch);
    this.running = withTimeout(request, this.options.timeoutMs ?? 10_000, 'offset commit')
      .then(
        () => {
          this.committedCount++;
        },
        (error: unknown) => {
          if (error instanceof KafkaTimeoutError) {
            // Abandoned, not dead: once the client is done with it (it may have stored these
            // older positions after a newer commit), the current positions go out again.
            const keys = batch.map((position) => key(position));
            request.then(
              () => this.recommit(keys),
              () => this.recommit(keys),
            );
          }
          // Back into pending unless a newer position of the same partition arrived meanwhile.
          for (const position of batch) {
            const k = key(position);
            if (!this.pending.has(k) && this.positions.get(k) === position)
              this.pending.set(k, position);
          }
          this.reportError(error, batch);
          if (!this.closed && this.pending.size > 0 && this.retryTimer === undefined) {
            this.retryTimer = unref(
              this.timers.setTimeout(() => {
                this.retryTimer = undefined;
                this.kick();
              }, this.options.retryDelayMs ?? 1_000),
            );
          }
        },
      )
      .finally(() => {
        this.running = undefined;
        // Positions settled while the request was out go in the next one, at once.
        if (this.retryTimer === undefined) this.kick();
      });
    return this.running;
  }
}
