/** Retention for SENT rows: deleted in small batches, never a long lock. */
import type { Database } from '../db/database.js';
import {
  deleteInBatches,
  retentionAge,
  retentionBatchSize,
  retentionParams,
} from '../db/batched-retention.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

export interface PruneOutboxOptions extends OutboxTableOptions {
  /** Delete SENT rows whose `sent_at` is older than this many ms. */
  readonly olderThanMs: number;
  /** Rows per DELETE statement (default 1 000). */
  readonly batchSize?: number;
  /** Reference time (default: the database clock). */
  readonly now?: Date;
}

/**
 * Deletes SENT rows older than the retention, one batch per statement, until none are left.
 * READY, PROCESSING and DEAD rows are never touched. Returns how many rows were deleted.
 */
export async function pruneOutbox(db: Database, options: PruneOutboxOptions): Promise<number> {
  const { table } = outboxTableNames(options, db.dialect);
  const mysql = db.dialect.name === 'mysql';
  const batchSize = retentionBatchSize(options.batchSize);
  const olderThanMs = retentionAge(options.olderThanMs);
  // MySQL: DELETE … LIMIT instead of a locked subquery (a relay never holds SENT rows). In id
  // order, as on PostgreSQL: the (status, id) index then stops at the batch, where ORDER BY
  // sent_at was planned as a filesort that read and locked every expired row for each batch.
  const sql = mysql
    ? `DELETE FROM ${table}
  WHERE status = 'SENT' AND sent_at < COALESCE(?, UTC_TIMESTAMP(3)) - INTERVAL ? MICROSECOND
  ORDER BY id LIMIT ?`
    : `DELETE FROM ${table} WHERE id IN (
  SELECT id FROM ${table}
  WHERE status = 'SENT' AND sent_at < COALESCE($3::timestamptz, now()) - $1::float8 * interval '1 millisecond'
  ORDER BY id LIMIT $2::int
  FOR UPDATE SKIP LOCKED)`;
  return deleteInBatches(
    db,
    sql,
    retentionParams(mysql, olderThanMs, batchSize, options.now),
    batchSize,
  );
}
