/**
 * DDL of the inbox and of the ordering table, plus an idempotent migration
 * that is safe when several processes start at once.
 */
import type { Database } from '../db/database.js';
import { quoteIdentifier } from '../db/sql-identifier.js';
import {
  DEFAULT_INBOX_TABLE,
  DEFAULT_ORDERING_TABLE,
  inboxTableName,
  orderingTableName,
  type InboxTableOptions,
} from './inbox-tables.js';

/** The migration as separate statements (PGlite's `query` runs one statement at a time). */
export function inboxMigrationStatements(options: InboxTableOptions = {}): string[] {
  const inbox = inboxTableName(options);
  const ordering = orderingTableName(options);
  const receivedIndex = quoteIdentifier(`${options.table ?? DEFAULT_INBOX_TABLE}_received_at_idx`);
  const statements: string[] = [];
  if (options.schema !== undefined)
    statements.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(options.schema)}`);
  statements.push(
    // The primary key is the arbiter of "already handled": (message, consumer), never the business key.
    `CREATE TABLE IF NOT EXISTS ${inbox} (
  message_id text NOT NULL,
  consumer text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz,
  PRIMARY KEY (message_id, consumer)
)`,
    // Retention deletes by age.
    `CREATE INDEX IF NOT EXISTS ${receivedIndex} ON ${inbox} (received_at)`,
    // Last aggregate version each consumer applied, so old events never overwrite newer state.
    `CREATE TABLE IF NOT EXISTS ${ordering} (
  consumer text NOT NULL,
  aggregate_type text NOT NULL,
  aggregate_id text NOT NULL,
  version bigint NOT NULL,
  message_id text,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, aggregate_type, aggregate_id)
)`,
  );
  return statements;
}

/** The migration as one SQL script, for migration tools (Flyway, node-pg-migrate, psql). */
export function inboxMigrationSql(options: InboxTableOptions = {}): string {
  return inboxMigrationStatements(options)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/**
 * Creates the inbox and ordering tables when missing. Idempotent; concurrent callers are
 * serialised by a transaction-scoped advisory lock, because concurrent `CREATE … IF NOT EXISTS`
 * can still fail on the catalog's unique indexes.
 */
export async function migrateInbox(db: Database, options: InboxTableOptions = {}): Promise<void> {
  const statements = inboxMigrationStatements(options);
  const lockKey = `evgen.inbox:${options.schema ?? ''}.${options.table ?? DEFAULT_INBOX_TABLE}.${
    options.orderingTable ?? DEFAULT_ORDERING_TABLE
  }`;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    for (const statement of statements) await tx.query(statement);
  });
}
