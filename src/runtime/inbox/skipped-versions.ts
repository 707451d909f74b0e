/**
 * Records the `aggregateVersion` of events a consumer skips (types it does not subscribe to), so
 * `ctx.inOrder` on its subscribed events sees no gap where a skipped event was. Records queued
 * while a batch is being written go into the next batch: one transaction for many skips.
 *
 * A skipped version is recorded exactly as a handled one (`markApplied`, the same table) when it
 * is the aggregate's next version; an older one changes nothing; one ahead of a missing version
 * rejects with AggregateVersionGapError (retryable), like a subscribed event would, so the
 * transport brings it back after the missing version instead of jumping over it.
 */
import type { Database } from '../db/database.js';
import {
  AggregateVersionGapError,
  checkOrder,
  lastAppliedVersion,
  markApplied,
  type AggregateVersionKey,
} from './aggregate-order.js';

type SkippedVersion = AggregateVersionKey & { readonly messageId?: string };

interface Pending {
  readonly key: SkippedVersion;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Most skips written in one transaction. */
const MAX_BATCH = 500;

export class SkippedVersionRecorder {
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly db: Database) {}

  /** Resolves once the version is recorded (or found stale); rejects on a gap or a database error. */
  record(key: SkippedVersion): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      this.running ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    // Let skips decided in the same turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.write(batch);
      }
    } finally {
      this.running = undefined;
    }
  }

  private async write(batch: readonly Pending[]): Promise<void> {
    let gaps: Map<Pending, AggregateVersionGapError>;
    try {
      gaps = await this.db.transaction(async (tx) => {
        const found = new Map<Pending, AggregateVersionGapError>();
        for (const pending of batch) {
          const verdict = await checkOrder(tx, pending.key);
          if (verdict === 'next') await markApplied(tx, pending.key);
          else if (verdict === 'gap') {
            const { aggregateType, aggregateId, version } = pending.key;
            const last = await lastAppliedVersion(tx, pending.key);
            found.set(
              pending,
              new AggregateVersionGapError(aggregateType, aggregateId, last + 1, version),
            );
          }
        }
        return found;
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    for (const pending of batch) {
      const gap = gaps.get(pending);
      if (gap === undefined) pending.resolve();
      else pending.reject(gap);
    }
  }
}
