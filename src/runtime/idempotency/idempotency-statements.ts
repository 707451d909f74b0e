/**
 * The SQL of one key's life, per dialect: claim (insert IN_PROGRESS with a lease), read, take
 * over an expired lease, lock for the executing transaction, complete, release. Times come from
 * the database clock, so processes with skewed clocks agree on when a lease expired.
 */
import type { Queryable, Transaction } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import type { IdempotencyStatus } from './idempotency-table.js';

/** A key's row as a later request sees it. */
interface IdempotencyRow {
  readonly requestHash: string;
  readonly status: IdempotencyStatus;
  /** The stored result as JSON text (COMPLETED rows). */
  readonly response: string | null;
  /** The lease of an IN_PROGRESS row has not expired. */
  readonly leased: boolean;
  readonly attempts: number;
}

/** MySQL/MariaDB's error number for a duplicate key (ER_DUP_ENTRY). */
const MYSQL_DUPLICATE_KEY = 1062;

function leaseEnd(mysql: boolean, param: string): string {
  return mysql
    ? `UTC_TIMESTAMP(3) + INTERVAL ${param} MICROSECOND`
    : `now() + ${param}::float8 * interval '1 millisecond'`;
}

/** Lease length as the dialect's parameter: microseconds on MySQL, milliseconds on PostgreSQL. */
function leaseParam(mysql: boolean, leaseMs: number): number {
  return mysql ? Math.round(leaseMs * 1000) : leaseMs;
}

/**
 * Inserts the key IN_PROGRESS with a lease held by `token`; false when the key exists. MySQL: a
 * plain INSERT whose duplicate-key error (and only that) means "exists" (INSERT IGNORE would turn
 * other errors into warnings).
 */
export async function insertClaim(
  db: Queryable,
  table: string,
  key: string,
  fingerprint: string,
  token: string,
  leaseMs: number,
): Promise<boolean> {
  const mysql = dialectOf(db).name === 'mysql';
  if (mysql) {
    try {
      await db.query(
        `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until, attempts, created_at)
         VALUES (?, ?, 'IN_PROGRESS', ?, ${leaseEnd(true, '?')}, 1, UTC_TIMESTAMP(3))`,
        [key, fingerprint, token, leaseParam(true, leaseMs)],
      );
      return true;
    } catch (error) {
      if ((error as { errno?: unknown }).errno === MYSQL_DUPLICATE_KEY) return false;
      throw error;
    }
  }
  const inserted = await db.query(
    `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until, attempts)
     VALUES ($1, $2, 'IN_PROGRESS', $3::uuid, ${leaseEnd(false, '$4')}, 1)
     ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1 AS claimed`,
    [key, fingerprint, token, leaseParam(false, leaseMs)],
  );
  return inserted.rows.length === 1;
}

/** The key's row, or undefined when there is none (never written, released or pruned). */
export async function readRow(
  db: Queryable,
  table: string,
  key: string,
): Promise<IdempotencyRow | undefined> {
  const mysql = dialectOf(db).name === 'mysql';
  const result = await db.query<{
    request_hash: string;
    status: IdempotencyStatus;
    response: string | null;
    leased: unknown;
    attempts: number | string;
  }>(
    mysql
      ? `SELECT request_hash, status, response, (locked_until > UTC_TIMESTAMP(3)) AS leased, attempts FROM ${table} WHERE idempotency_key = ?`
      : `SELECT request_hash, status, response, (locked_until > now()) AS leased, attempts FROM ${table} WHERE idempotency_key = $1`,
    [key],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return {
    requestHash: row.request_hash,
    status: row.status,
    response: row.response,
    leased: row.leased === true || Number(row.leased) === 1,
    attempts: Number(row.attempts),
  };
}

/**
 * Takes over an IN_PROGRESS key whose lease expired: true when `token` now holds it. A row locked
 * by a live execution's transaction is skipped (SKIP LOCKED), not waited for: that execution is
 * still running, whatever its lease says.
 */
export async function takeOverExpired(
  tx: Transaction,
  table: string,
  key: string,
  token: string,
  leaseMs: number,
): Promise<boolean> {
  const mysql = dialectOf(tx).name === 'mysql';
  const locked = await tx.query(
    mysql
      ? `SELECT idempotency_key FROM ${table} WHERE idempotency_key = ? AND status = 'IN_PROGRESS' AND locked_until <= UTC_TIMESTAMP(3) FOR UPDATE SKIP LOCKED`
      : `SELECT idempotency_key FROM ${table} WHERE idempotency_key = $1 AND status = 'IN_PROGRESS' AND locked_until <= now() FOR UPDATE SKIP LOCKED`,
    [key],
  );
  if (locked.rows.length === 0) return false;
  await tx.query(
    mysql
      ? `UPDATE ${table} SET lease_token = ?, locked_until = ${leaseEnd(true, '?')}, attempts = attempts + 1 WHERE idempotency_key = ?`
      : `UPDATE ${table} SET lease_token = $1::uuid, locked_until = ${leaseEnd(false, '$2')}, attempts = attempts + 1 WHERE idempotency_key = $3`,
    [token, leaseParam(mysql, leaseMs), key],
  );
  return true;
}

/**
 * Locks the key's row for the executing transaction while `token` still holds its lease; false
 * when another execution took it over. Held until that transaction ends, so a takeover cannot
 * happen while the business write is under way.
 */
export async function lockHeldLease(
  tx: Transaction,
  table: string,
  key: string,
  token: string,
): Promise<boolean> {
  const mysql = dialectOf(tx).name === 'mysql';
  const locked = await tx.query(
    mysql
      ? `SELECT idempotency_key FROM ${table} WHERE idempotency_key = ? AND lease_token = ? AND status = 'IN_PROGRESS' FOR UPDATE`
      : `SELECT idempotency_key FROM ${table} WHERE idempotency_key = $1 AND lease_token = $2::uuid AND status = 'IN_PROGRESS' FOR UPDATE`,
    [key, token],
  );
  return locked.rows.length === 1;
}

/** Stores the result and marks the key COMPLETED, in the executing transaction. */
export async function completeRow(
  tx: Transaction,
  table: string,
  key: string,
  response: string,
): Promise<void> {
  const mysql = dialectOf(tx).name === 'mysql';
  await tx.query(
    mysql
      ? `UPDATE ${table} SET status = 'COMPLETED', response = ?, lease_token = NULL, locked_until = NULL, completed_at = UTC_TIMESTAMP(3) WHERE idempotency_key = ?`
      : `UPDATE ${table} SET status = 'COMPLETED', response = $1, lease_token = NULL, locked_until = NULL, completed_at = now() WHERE idempotency_key = $2`,
    [response, key],
  );
}

/**
 * Deletes the key while `token` still leases it (nothing was committed: the handler failed or
 * its result is not stored), so the client's retry runs at once instead of after the lease.
 */
export async function releaseRow(
  db: Queryable,
  table: string,
  key: string,
  token: string,
): Promise<void> {
  const mysql = dialectOf(db).name === 'mysql';
  await db.query(
    mysql
      ? `DELETE FROM ${table} WHERE idempotency_key = ? AND lease_token = ? AND status = 'IN_PROGRESS'`
      : `DELETE FROM ${table} WHERE idempotency_key = $1 AND lease_token = $2::uuid AND status = 'IN_PROGRESS'`,
    [key, token],
  );
}
