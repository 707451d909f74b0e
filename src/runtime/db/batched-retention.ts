/**
 * What every retention (outbox SENT rows, inbox rows, idempotency keys) shares: a checked batch
 * size and a DELETE repeated one batch per statement until a batch comes back short, so a large
 * backlog never holds long locks.
 */
import type { Database } from './database.js';
import { mysqlTimestamp } from './sql-timestamp.js';

/** `batchSize` (default 1 000) as a positive whole number, or a RangeError naming it. */
export function retentionBatchSize(batchSize: number | undefined): number {
  const size = Math.floor(batchSize ?? 1_000);
  if (!(size > 0)) throw new RangeError(`batchSize must be positive, got ${String(batchSize)}`);
  return size;
}

/** `olderThanMs` checked (≥ 0), or a RangeError naming it. */
export function retentionAge(olderThanMs: number): number {
  if (!(olderThanMs >= 0)) throw new RangeError(`olderThanMs must be ≥ 0, got ${olderThanMs}`);
  return olderThanMs;
}

/**
 * The parameters of a "older than `olderThanMs` before `now` (default: the database clock)"
 * DELETE … LIMIT: MySQL `(?, ?, ?)` = now or NULL, age in µs, batch; PostgreSQL `($1, $2, $3)` =
 * age in ms, batch, now or NULL.
 */
export function retentionParams(
  mysql: boolean,
  olderThanMs: number,
  batchSize: number,
  now: Date | undefined,
): unknown[] {
  return mysql
    ? [now === undefined ? null : mysqlTimestamp(now), Math.round(olderThanMs * 1000), batchSize]
    : [olderThanMs, batchSize, now?.toISOString() ?? null];
}

/** Runs `sql` (one batch of at most `batchSize` deletions) until a batch is short; the total. */
export async function deleteInBatches(
  db: Database,
  sql: string,
  params: readonly unknown[],
  batchSize: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.query(sql, params);
    total += deleted.rowCount;
    if (deleted.rowCount < batchSize) return total;
  }
}
