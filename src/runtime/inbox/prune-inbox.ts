/**
 * Inbox retention. A row must outlive every redelivery of its message (broker redelivery, retry
 * tiers, dead-letter replays): once it is deleted, the same messageId would be handled again.
 * Pick `olderThan` well beyond the longest retry and replay window.
 */
import type { Database } from '../db/database.js';
import { mysqlTimestamp } from '../db/sql-timestamp.js';
import { deleteInBatches, retentionBatchSize } from '../db/batched-retention.js';
import { inboxTableName, type InboxTableOptions } from './inbox-tables.js';

export interface PruneInboxOptions extends InboxTableOptions {
  /** Delete processed rows received before this instant. */
  readonly olderThan: Date;
  /** Rows per DELETE statement, so a large backlog never holds long locks (default 1000). */
  readonly batchSize?: number;
}

/** Deletes processed inbox rows older than `olderThan`, in batches; returns how many were deleted. */
export async function pruneInbox(db: Database, options: PruneInboxOptions): Promise<number> {
  const table = inboxTableName(options, db.dialect);
  const mysql = db.dialect.name === 'mysql';
  const batchSize = retentionBatchSize(options.batchSize);
  return mysql
    ? deleteInBatches(
        db,
        `DELETE FROM ${table} WHERE processed_at IS NOT NULL AND received_at < ? ORDER BY received_at LIMIT ?`,
        [mysqlTimestamp(options.olderThan), batchSize],
        batchSize,
      )
    : deleteInBatches(
        db,
        `DELETE FROM ${table} WHERE ctid IN (
         SELECT ctid FROM ${table} WHERE processed_at IS NOT NULL AND received_at < $1 LIMIT $2
       )`,
        [options.olderThan.toISOString(), batchSize],
        batchSize,
      );
}
