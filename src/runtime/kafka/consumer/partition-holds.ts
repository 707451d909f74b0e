/**
 * Holding a Kafka partition at a record: pause the partition, seek back to the record and, after
 * a delay (when given), resume it there, so the adapter delivers the same record again. Used for
 * retry copies not due yet, in-place retries, unacknowledged settles and the circuit breaker;
 * one partition's hold never blocks the others. Also which partitions this member owns now: a
 * record of a partition revoked meanwhile is left to its next owner.
 */
import type { RunnerTimers } from '../../delivery/runner-timers.js';
import type { KafkaConsumer, KafkaInboundRecord, KafkaTopicPartition } from '../kafka-client.js';

export const tpKey = (tp: KafkaTopicPartition): string => `${tp.topic}:${tp.partition}`;

export class PartitionHolds {
  /** Partitions this member owns now. */
  readonly #owned = new Set<string>();
  /** Partitions paused by a hold: a timer resumes each, or a re-assignment or the breaker does. */
  readonly #holds = new Map<string, unknown>();
  /** Where each held partition resumes: the lowest offset held since it was paused. */
  readonly #heldAt = new Map<string, bigint>();

  constructor(
    private readonly consumer: () => KafkaConsumer | undefined,
    /** Whether a timer may resume a partition now (running, breaker closed). */
    private readonly mayResume: () => boolean,
    private readonly onError: (error: unknown) => void,
    /** The runner's timers seam: a held partition resumes through it. */
    private readonly timers: RunnerTimers,
  ) {}

  owns(tp: KafkaTopicPartition): boolean {
    return this.#owned.has(tpKey(tp));
  }

  /** Stops the partition at `record`; resumes it there after `delayMs`, if given. */
  hold(record: KafkaInboundRecord, delayMs: number | undefined): void {
    const tp = { topic: record.topic, partition: record.partition };
    const key = tpKey(tp);
    const consumer = this.consumer();
    if (!this.#owned.has(key) || consumer === undefined) return; // revoked: the next owner reads it
    // Records of one partition run concurrently (partition-lanes.ts): a hold of a later record
    // while an earlier one is held must not seek past the earlier one, nor resume it sooner.
    const at = this.#heldAt.get(key);
    const offset = BigInt(record.offset);
    if (at !== undefined && at <= offset) {
      if (delayMs === undefined) {
        this.#clear(this.#holds.get(key));
        this.#holds.set(key, undefined);
      }
      return;
    }
    this.#heldAt.set(key, offset);
    this.#clear(this.#holds.get(key));
    this.#try(() => {
      consumer.pause([tp]);
      consumer.seek({ ...tp, offset: record.offset });
    });
    const timer =
      delayMs === undefined
        ? undefined
        : this.timers.setTimeout(() => {
            this.#holds.delete(key);
            this.#heldAt.delete(key);
            // While the breaker is open every partition stays paused; resuming takes this one too.
            if (this.mayResume() && this.#owned.has(key))
              this.#try(() => this.consumer()?.resume([tp]));
          }, delayMs);
    this.#holds.set(key, timer);
  }

  /** The breaker closed: resumes every owned partition not waiting for its own timer. */
  resumeAll(): void {
    const consumer = this.consumer();
    if (consumer === undefined) return;
    const partitions = consumer
      .assignment()
      .filter((tp) => this.#holds.get(tpKey(tp)) === undefined && this.#owned.has(tpKey(tp)));
    for (const tp of partitions) {
      this.#holds.delete(tpKey(tp));
      this.#heldAt.delete(tpKey(tp));
    }
    if (partitions.length > 0) consumer.resume(partitions);
  }

  /** Pauses every assigned partition (the breaker opened). */
  pauseAll(): void {
    const consumer = this.consumer();
    const partitions = consumer?.assignment() ?? [];
    if (partitions.length > 0) this.#try(() => consumer!.pause(partitions));
  }

  assigned(partitions: readonly KafkaTopicPartition[], running: boolean): void {
    for (const tp of partitions) {
      const key = tpKey(tp);
      this.#owned.add(key);
      // Paused by an earlier hold whose timer a revocation cleared: delivery starts again from
      // the committed offset, which is that held record.
      if (this.#holds.has(key) && this.#holds.get(key) === undefined && running) {
        this.#holds.delete(key);
        this.#heldAt.delete(key);
        this.#try(() => this.consumer()?.resume([tp]));
      }
    }
  }

  revoked(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      const key = tpKey(tp);
      this.#owned.delete(key);
      // The next owner starts from the committed offset.
      this.#heldAt.delete(key);
      if (this.#holds.has(key)) {
        this.#clear(this.#holds.get(key));
        this.#holds.set(key, undefined);
      }
    }
  }

  /** Stopping: no timer resumes anything any more (owned partitions still commit). */
  clearTimers(): void {
    for (const timer of this.#holds.values()) this.#clear(timer);
  }

  /** Starting again: nothing held, nothing owned until the group assigns it. */
  reset(): void {
    this.clearTimers();
    this.#holds.clear();
    this.#heldAt.clear();
    this.#owned.clear();
  }

  #clear(timer: unknown): void {
    if (timer !== undefined) this.timers.clearTimeout(timer);
  }

  #try(action: () => void): void {
    try {
      action();
    } catch (error) {
      this.onError(error);
    }
  }
}
