/**
 * The idempotency table's answer for one key, for `evgen trace`: which request it was, whether it
 * completed, and the messageIds of the events it wrote (derived, so they are computed, not stored).
 */
import type { Database } from '../db/database.js';
import { outboxTableNames, type OutboxTableOptions } from '../outbox/outbox-table.js';
import { IDEMPOTENCY_KEY_HEADER } from './request-event-ids.js';
import {
  idempotencyTableNames,
  type IdempotencyStatus,
  type IdempotencyTableOptions,
} from './idempotency-table.js';

export interface IdempotencyKeyRecord {
  readonly key: string;
  readonly requestHash: string;
  readonly status: IdempotencyStatus;
  /** Executions started (more than 1: a lease was taken over after a process died). */
  readonly attempts: number;
  /** The stored result as JSON text (COMPLETED). */
  readonly response: string | null;
  /** ISO-8601 UTC timestamps (millisecond precision). */
  readonly createdAt: string;
  readonly completedAt: string | null;
  readonly lockedUntil: string | null;
}

/** The row of `key`, or undefined when there is none (never used, released, or pruned). */
export async function findIdempotencyKey(
  db: Database,
  key: string,
  options: IdempotencyTableOptions = {},
): Promise<IdempotencyKeyRecord | undefined> {
  const { table } = idempotencyTableNames(options, db.dialect);
  const { isoTimestamp, quoteIdentifier: q, param } = db.dialect;
  const result = await db.query<
    Omit<IdempotencyKeyRecord, 'attempts'> & { attempts: number | string }
  >(
    `SELECT idempotency_key AS ${q('key')}, request_hash AS ${q('requestHash')}, status, attempts, response,
       ${isoTimestamp('created_at')} AS ${q('createdAt')}, ${isoTimestamp('completed_at')} AS ${q('completedAt')},
       ${isoTimestamp('locked_until')} AS ${q('lockedUntil')}
     FROM ${table} WHERE idempotency_key = ${param(1)}`,
    [key],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : { ...row, attempts: Number(row.attempts) };
}

/**
 * The messageIds of the outbox rows carrying `key` in their `idempotency-key` header (the events
 * a request wrote, caller-fixed messageIds included), in write order. Rows cleaned up after SENT
 * and a CDC outbox's (deleted at once) are not there; their derived ids still name them (see
 * `requestEventMessageId`).
 */
export async function findOutboxEventIdsByKey(
  db: Database,
  key: string,
  options: OutboxTableOptions = {},
): Promise<string[]> {
  const { table } = outboxTableNames(options, db.dialect);
  const result = await db.query<{ message_id: string }>(
    db.dialect.name === 'mysql'
      ? `SELECT event_id AS message_id FROM ${table} WHERE JSON_UNQUOTE(JSON_EXTRACT(headers, '$."${IDEMPOTENCY_KEY_HEADER}"')) = ? ORDER BY id`
      : `SELECT event_id::text AS message_id FROM ${table} WHERE headers ->> '${IDEMPOTENCY_KEY_HEADER}' = $1 ORDER BY id`,
    [key],
  );
  return result.rows.map((row) => row.message_id);
}
