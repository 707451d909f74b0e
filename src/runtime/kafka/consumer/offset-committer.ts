/**
 * Commits consumed positions without a round trip per record. The runner reports each settled
 * record (`settled(tp, offset + 1)`) only after its inbox transaction committed or its retry copy
 * or dead letter was acknowledged; the committer keeps the highest such position per partition
 * and commits every pending one in ONE request, with at most one request in flight: positions
 * settled meanwhile ride on the next request. A failed commit keeps its positions pending and is
 * tried again (after `retryDelayMs`, or with the next settled record); a crash in between only
 * means redelivery of settled records, which the inbox absorbs.
 */
import type { KafkaCommitOffset, KafkaTopicPartition } from '../kafka-client.js';

export interface OffsetCommitterOptions {
  /** Stores positions (next offset to read) for the group. */
  commit(offsets: readonly KafkaCommitOffset[]): Promise<void>;
  /** A commit failed; its positions stay pending. */
  onError?(error: unknown, offsets: readonly KafkaCommitOffset[]): void;
  /** Delay before a failed commit is tried again without new records. Default 1000 ms. */
  readonly retryDelayMs?: number;
}

const key = (tp: KafkaTopicPartition) => `${tp.topic}:${tp.partition}`;

export class OffsetCommitter {
  /** Highest settled position per partition since the partition was (re)assigned. */
  private readonly positions = new Map<string, KafkaCommitOffset>();
  /** Positions not yet stored by the broker. */
  private readonly pending = new Map<string, KafkaCommitOffset>();
  private running: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private committedCount = 0;

  constructor(private readonly options: OffsetCommitterOptions) {}

  /** Records that everything before `offset` (the next offset to read) of `tp` is settled. */
  settled(tp: KafkaTopicPartition, offset: bigint): void {
    const k = key(tp);
    const previous = this.positions.get(k);
    if (previous !== undefined && BigInt(previous.offset) >= offset) return;
    const position = { topic: tp.topic, partition: tp.partition, offset: offset.toString() };
    this.positions.set(k, position);
    this.pending.set(k, position);
    this.kick();
  }

  /** The highest settled position of `tp` (next offset to read), if any. */
  position(tp: KafkaTopicPartition): bigint | undefined {
    const position = this.positions.get(key(tp));
    return position === undefined ? undefined : BigInt(position.offset);
  }

  /** Commit requests the broker acknowledged. */
  get commits(): number {
    return this.committedCount;
  }

  /** Positions settled but not stored yet. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Commits what is pending now and resolves when the broker stored it (or the attempt failed;
   * see `onError`). Resolves at once when nothing is pending.
   */
  async flush(): Promise<void> {
    while (this.running !== undefined) await this.running;
    if (this.pending.size > 0) await this.start();
  }

  /**
   * Forgets partitions (revoked): their pending positions are dropped, and a later assignment
   * starts from whatever the group has committed.
   */
  forget(tps: readonly KafkaTopicPartition[]): void {
    for (const tp of tps) {
      this.positions.delete(key(tp));
      this.pending.delete(key(tp));
    }
  }

  /** Stops retry timers (the runner is stopping). */
  close(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private kick(): void {
    // The request never rejects (failures go to onError and back into pending).
    if (this.running === undefined && this.pending.size > 0) void this.start();
  }

  /** Sends what is pending; returns the request, also kept in `running` until it settles. */
  private start(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.running = this.options
      .commit(batch)
      .then(
        () => {
          this.committedCount++;
        },
        (error: unknown) => {
          // Back into pending unless a newer position of the same partition arrived meanwhile.
          for (const position of batch) {
            const k = key(position);
            if (!this.pending.has(k) && this.positions.get(k) === position)
              this.pending.set(k, position);
          }
          try {
            this.options.onError?.(error, batch);
          } catch {
            // An observer must not break committing.
          }
          if (this.pending.size > 0 && this.retryTimer === undefined) {
            this.retryTimer = setTimeout(() => {
              this.retryTimer = undefined;
              this.kick();
            }, this.options.retryDelayMs ?? 1_000);
            this.retryTimer.unref();
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
