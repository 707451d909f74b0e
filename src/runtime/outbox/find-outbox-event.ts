/**
 * The outbox's answer for one messageId: was it written, is it published (SENT),
 * how often was it tried, did it go DEAD and why. The broker and inbox sides answer the rest
 * (`findInboxEntries`, the consumer runner's events and dead-letter headers).
 */
import type { Database } from '../db/database.js';
import { isUuid } from '../envelope-values.js';
import { outboxTableNames, type OutboxStatus, type OutboxTableOptions } from './outbox-table.js';

export interface OutboxEventRecord {
  readonly messageId: string;
  readonly eventType: string;
  readonly schemaVersion: number;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly status: OutboxStatus;
  /** Publish attempts started (a lease taken counts as one). */
  readonly attempts: number;
  readonly lastError: string | null;
  /** ISO-8601 UTC timestamps (millisecond precision). */
  readonly createdAt: string;
  readonly availableAt: string;
  readonly sentAt: string | null;
}

/** The outbox row of `messageId`, or undefined when none was written (or it was cleaned up after SENT). */
export async function findOutboxEvent(
  db: Database,
  messageId: string,
  options: OutboxTableOptions = {},
): Promise<OutboxEventRecord | undefined> {
  const { table } = outboxTableNames(options, db.dialect);
  const { isoTimestamp, quoteIdentifier: q } = db.dialect;
  const mysql = db.dialect.name === 'mysql';
  // event_id is a UUID column: any other text cannot be there (and would be a cast error).
  if (!isUuid(messageId)) return undefined;
  const result = await db.query<
    Omit<OutboxEventRecord, 'attempts' | 'schemaVersion'> & {
      attempts: number | string;
      schemaVersion: number | string;
    }
  >(
    `SELECT ${mysql ? 'event_id' : 'event_id::text'} AS ${q('messageId')}, event_type AS ${q('eventType')}, schema_version AS ${q('schemaVersion')},
       aggregate_type AS ${q('aggregateType')}, aggregate_id AS ${q('aggregateId')}, status, attempts, last_error AS ${q('lastError')},
       ${isoTimestamp('created_at')} AS ${q('createdAt')}, ${isoTimestamp('available_at')} AS ${q('availableAt')}, ${isoTimestamp('sent_at')} AS ${q('sentAt')}
     FROM ${table} WHERE event_id = ${mysql ? '?' : '$1::uuid'}`,
    [messageId],
  );
  const row = result.rows[0];
  return row === undefined
    ? undefined
    : { ...row, attempts: Number(row.attempts), schemaVersion: Number(row.schemaVersion) };
}
