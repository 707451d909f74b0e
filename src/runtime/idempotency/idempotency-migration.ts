/**
 * The idempotency table as idempotent SQL per dialect (PostgreSQL and PGlite, MySQL 8 /
 * MariaDB), and a migrate() safe to run repeatedly and from several processes at once.
 */
import type { Database } from '../db/database.js';
import { runLockedMigration } from '../db/migration-lock.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { checkMysqlSchema } from '../db/sql-identifier.js';
import { idempotencyTableNames, type IdempotencyTableOptions } from './idempotency-table.js';

/**
 * The longest key accepted, in characters (printable ASCII, so also bytes): the column's width.
 * 255 leaves room for a UUID, a ULID or a client's own prefixed id, and stays inside MySQL's
 * index key limit.
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The migration as separate statements for `dialect` (PostgreSQL unless given). Every statement
 * is `IF NOT EXISTS`, so re-running is a no-op.
 *
 * Columns: the key; `request_hash`, the request's fingerprint (a later request with the same key
 * and another fingerprint is a conflict); `status`; `lease_token` and `locked_until`, the lease
 * of the execution running it (another may take over once it expired); `attempts`, executions
 * started; `response`, the stored result as JSON text; `created_at` and `completed_at`.
 */
export function idempotencyMigrationStatements(
  options: IdempotencyTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string[] {
  if (dialect.name === 'mysql') {
    checkMysqlSchema(options.schema);
    const n = idempotencyTableNames(options, MYSQL_DIALECT);
    return [
      ...(n.schema !== undefined
        ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema} DEFAULT CHARACTER SET utf8mb4`]
        : []),
      `CREATE TABLE IF NOT EXISTS ${n.table} (
  idempotency_key VARCHAR(${MAX_IDEMPOTENCY_KEY_LENGTH}) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  request_hash    VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  status          VARCHAR(12) CHARACTER SET ascii NOT NULL,
  lease_token     CHAR(36) CHARACTER SET ascii NULL,
  locked_until    DATETIME(3) NULL,
  attempts        INT NOT NULL DEFAULT 1,
  response        LONGTEXT NULL,
  created_at      DATETIME(3) NOT NULL,
  completed_at    DATETIME(3) NULL,
  -- Retention cleanup, oldest first.
  KEY ${n.createdIndex} (created_at),
  CONSTRAINT ${MYSQL_DIALECT.quoteIdentifier(`${options.table ?? 'idempotency_key'}_status_check`)} CHECK (status IN ('IN_PROGRESS', 'COMPLETED'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ];
  }
  const n = idempotencyTableNames(options, POSTGRES_DIALECT);
  return [
    ...(n.schema !== undefined ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema}`] : []),
    `CREATE TABLE IF NOT EXISTS ${n.table} (
  idempotency_key VARCHAR(${MAX_IDEMPOTENCY_KEY_LENGTH}) COLLATE "C" PRIMARY KEY,
  request_hash    TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('IN_PROGRESS', 'COMPLETED')),
  lease_token     UUID NULL,
  locked_until    TIMESTAMPTZ NULL,
  attempts        INTEGER NOT NULL DEFAULT 1,
  response        TEXT NULL,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  completed_at    TIMESTAMPTZ NULL
)`,
    // Serves retention cleanup, oldest first.
    `CREATE INDEX IF NOT EXISTS ${n.createdIndex} ON ${n.table} (created_at)`,
  ];
}

/** The migration as one SQL script (for `idempotency/migration.sql` and other migration tools). */
export function idempotencyMigrationSql(
  options: IdempotencyTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  return idempotencyMigrationStatements(options, dialect)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/**
 * Creates the idempotency table if missing, in the database's dialect, under a lock keyed by the
 * table name (several instances starting at once queue instead of racing).
 */
export async function migrateIdempotency(
  db: Database,
  options: IdempotencyTableOptions = {},
): Promise<void> {
  const statements = idempotencyMigrationStatements(options, db.dialect);
  await runLockedMigration(
    db,
    `evgen:migrate-idempotency:${idempotencyTableNames(options).key}`,
    statements,
  );
}
