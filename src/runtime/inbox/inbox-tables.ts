/**
 * Where the inbox lives. Table names come from configuration, so they reach SQL only through
 * `qualifiedName` (which refuses anything but a plain identifier).
 */
import { POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';

export interface InboxTableOptions {
  /** Schema of both tables; the connection's search_path when omitted. */
  readonly schema?: string;
  /** Inbox table name, default `inbox_message`. */
  readonly table?: string;
  /** Per-consumer, per-aggregate version table used by the ordering helpers, default `inbox_aggregate_version`. */
  readonly orderingTable?: string;
}

export const DEFAULT_INBOX_TABLE = 'inbox_message';
export const DEFAULT_ORDERING_TABLE = 'inbox_aggregate_version';

/** The inbox table as quoted SQL, e.g. `"app"."inbox_message"`. Throws on an invalid name. */
export function inboxTableName(
  options: InboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  return dialect.qualifiedName(options.schema, options.table ?? DEFAULT_INBOX_TABLE);
}

/** The ordering table as quoted SQL. Throws on an invalid name. */
export function orderingTableName(
  options: InboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  return dialect.qualifiedName(options.schema, options.orderingTable ?? DEFAULT_ORDERING_TABLE);
}
