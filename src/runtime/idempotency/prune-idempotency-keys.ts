/**
 * Retention for idempotency keys, as the outbox's for SENT rows: deleted in small batches, never a
 * long lock. After its key is gone a request counts as new again, so keep keys longer than any
 * client retries (the IETF draft leaves the window to the server; document yours to clients).
 */
import type { Database } from '../db/database.js';
import {
  deleteInBatches,
  retentionAge,
  retentionBatchSize,
  retentionParams,
} from '../db/batched-retention.js';
import { idempotencyTableNames, type IdempotencyTableOptions } from './idempotency-table.js';

export interface PruneIdempotencyKeysOptions extends IdempotencyTableOptions {
  /** Delete keys created more than this many ms ago. */
  readonly olderThanMs: number;
  /** Rows per DELETE statement (default 1 000). */
  readonly batchSize?: number;
  /** Reference time (default: the database clock). */
  readonly now?: Date;
}

/**
 * Deletes COMPLETED keys, and IN_PROGRESS keys whose lease expired (their execution died without
 * committing anything), created before the retention; a key whose lease is live is kept. Returns
 * how many rows were deleted.
 */
export async function pruneIdempotencyKeys(
  db: Database,
  options: PruneIdempotencyKeysOptions,
): Promise<number> {
  const { table } = idempotencyTableNames(options, db.dialect);
  const mysql = db.dialect.name === 'mysql';
  const batchSize = retentionBatchSize(options.batchSize);
  const olderThanMs = retentionAge(options.olderThanMs);
  // PostgreSQL: a locked subquery that skips rows an execution holds; MySQL: DELETE … LIMIT in
  // created_at order (the created index stops at the batch).
  const sql = mysql
    ? `DELETE FROM ${table}
  WHERE created_at < COALESCE(?, UTC_TIMESTAMP(3)) - INTERVAL ? MICROSECOND
    AND (status = 'COMPLETED' OR locked_until <= UTC_TIMESTAMP(3))
  ORDER BY created_at LIMIT ?`
    : `DELETE FROM ${table} WHERE idempotency_key IN (
  SELECT idempotency_key FROM ${table}
  WHERE created_at < COALESCE($3::timestamptz, now()) - $1::float8 * interval '1 millisecond'
    AND (status = 'COMPLETED' OR locked_until <= now())
  ORDER BY created_at LIMIT $2::int
  FOR UPDATE SKIP LOCKED)`;
  return deleteInBatches(
    db,
    sql,
    retentionParams(mysql, olderThanMs, batchSize, options.now),
    batchSize,
  );
}
