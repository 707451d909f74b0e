/**
 * DDL of the inbox and of the ordering table, plus an idempotent migration
 * that is safe when several processes start at once.
 */
import type { Database } from '../db/database.js';
import { runLockedMigration } from '../db/migration-lock.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { quoteIdentifier } from '../db/sql-identifier.js';
import {
  DEFAULT_INBOX_TABLE,
  DEFAULT_ORDERING_TABLE,
  inboxTableName,
  orderingTableName,
  type InboxTableOptions,
} from './inbox-tables.js';
import { checkMysqlSchema } from '../db/sql-identifier.js';

/**
 * The migration as separate statements (PGlite's `query` runs one statement at a time), for
 * `dialect` (PostgreSQL unless given).
 */
export function inboxMigrationStatements(
  options: InboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string[] {
  if (dialect.name === 'mysql') {
    checkMysqlSchema(options.schema);
    return mysqlInboxStatements(options);
  }
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

/**
 * MySQL 8 / MariaDB: keys are VARCHAR(255) with a binary collation (exact comparison, as on
 * PostgreSQL), timestamps DATETIME(3) in UTC written by evgen's statements, the index declared
 * with the table (MySQL has no CREATE INDEX IF NOT EXISTS).
 */
function mysqlInboxStatements(options: InboxTableOptions): string[] {
  const inbox = inboxTableName(options, MYSQL_DIALECT);
  const ordering = orderingTableName(options, MYSQL_DIALECT);
  const q = MYSQL_DIALECT.quoteIdentifier;
  const receivedIndex = q(`${options.table ?? DEFAULT_INBOX_TABLE}_received_at_idx`);
  const table = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
  return [
    ...(options.schema !== undefined
      ? [`CREATE SCHEMA IF NOT EXISTS ${q(options.schema)} DEFAULT CHARACTER SET utf8mb4`]
      : []),
    `CREATE TABLE IF NOT EXISTS ${inbox} (
  message_id VARCHAR(255) NOT NULL,
  consumer VARCHAR(255) NOT NULL,
  received_at DATETIME(3) NOT NULL,
  processed_at DATETIME(3) NULL,
  PRIMARY KEY (message_id, consumer),
  KEY ${receivedIndex} (received_at)
) ${table}`,
    `CREATE TABLE IF NOT EXISTS ${ordering} (
  consumer VARCHAR(255) NOT NULL,
  aggregate_type VARCHAR(255) NOT NULL,
  aggregate_id VARCHAR(255) NOT NULL,
  version BIGINT NOT NULL,
  message_id VARCHAR(255) NULL,
  applied_at DATETIME(3) NOT NULL,
  PRIMARY KEY (consumer, aggregate_type, aggregate_id)
) ${table}`,
  ];
}

/** The migration as one SQL script, for migration tools (Flyway, node-pg-migrate, psql, mysql). */
export function inboxMigrationSql(
  options: InboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  return inboxMigrationStatements(options, dialect)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/**
 * Creates the inbox and ordering tables when missing, in the database's dialect. Idempotent;
 * concurrent callers are serialised by a lock (see runLockedMigration), because concurrent
 * `CREATE … IF NOT EXISTS` can still fail on the catalog's unique indexes. On MySQL/MariaDB a
 * server without `FOR UPDATE SKIP LOCKED` is refused first.
 */
export async function migrateInbox(db: Database, options: InboxTableOptions = {}): Promise<void> {
  const statements = inboxMigrationStatements(options, db.dialect);
  const lockKey = `evgen.inbox:${options.schema ?? ''}.${options.table ?? DEFAULT_INBOX_TABLE}.${
    options.orderingTable ?? DEFAULT_ORDERING_TABLE
  }`;
  await runLockedMigration(db, lockKey, statements);
}
