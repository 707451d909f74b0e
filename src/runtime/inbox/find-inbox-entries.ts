/**
 * The inbox's answer for one messageId: which consumers took it and committed
 * their handling. A row exists only once a handling transaction committed (a failed one rolls
 * its row back), so every entry is a committed, processed message for that consumer.
 */
import type { Database } from '../db/database.js';
import { isoTimestampSql } from '../db/sql-timestamp.js';
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
  const table = inboxTableName(options);
  const result = await db.query<InboxEntry>(
    `SELECT message_id AS "messageId", consumer, ${isoTimestampSql('received_at')} AS "receivedAt", ${isoTimestampSql('processed_at')} AS "processedAt"
     FROM ${table} WHERE message_id = $1 ORDER BY consumer COLLATE "C"`,
    [messageId],
  );
  return result.rows;
}
