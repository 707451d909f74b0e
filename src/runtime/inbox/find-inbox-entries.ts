/**
 * The inbox's answer for one messageId: which consumers took it and committed
 * their handling. A row exists only once a handling transaction committed (a failed one rolls
 * its row back), so every entry is a committed, processed message for that consumer.
 */
import type { Database } from '../db/database.js';
import { inboxTableName, type InboxTableOptions } from './inbox-tables.js';

export interface InboxEntry {
  readonly messageId: string;
  readonly consumer: string;
  /** ISO-8601 UTC timestamps (millisecond precision). */
  readonly receivedAt: string;
  readonly processedAt: string | null;
}

/** Inbox rows of `messageId`, one per consumer that handled it, sorted by consumer. */
export async function findInboxEntries(
  db: Database,
  messageId: string,
  options: InboxTableOptions = {},
): Promise<InboxEntry[]> {
  const { dialect } = db;
  const table = inboxTableName(options, dialect);
  const { isoTimestamp, quoteIdentifier: q } = dialect;
  const mysql = dialect.name === 'mysql';
  const result = await db.query<InboxEntry>(
    // MySQL: the binary collation of the column already sorts like "C".
    `SELECT message_id AS ${q('messageId')}, consumer, ${isoTimestamp('received_at')} AS ${q('receivedAt')}, ${isoTimestamp('processed_at')} AS ${q('processedAt')}
     FROM ${table} WHERE message_id = ${mysql ? '?' : '$1'} ORDER BY consumer${mysql ? '' : ' COLLATE "C"'}`,
    [messageId],
  );
  return result.rows;
}
