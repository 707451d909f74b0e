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

const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Inbox rows of `messageId`, one per consumer that handled it, sorted by consumer. */
export async function findInboxEntries(
  db: Database,
  messageId: string,
  options: InboxTableOptions = {},
): Promise<InboxEntry[]> {
  const table = inboxTableName(options);
  const result = await db.query<InboxEntry>(
    `SELECT message_id AS "messageId", consumer, ${iso('received_at')} AS "receivedAt", ${iso('processed_at')} AS "processedAt"
     FROM ${table} WHERE message_id = $1 ORDER BY consumer COLLATE "C"`,
    [messageId],
  );
  return result.rows;
}
