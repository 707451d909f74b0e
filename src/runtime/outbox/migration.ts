/**
 * The outbox schema as idempotent SQL per dialect, and a migrate() that is safe to run
 * repeatedly and from several processes at once.
 */
import type { Database } from '../db/database.js';
import { runLockedMigration, type MigrationStep } from '../db/migration-lock.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { checkIdentifier } from '../db/sql-identifier.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';
import { checkMysqlSchema } from '../db/sql-identifier.js';

/**
 * The migration as separate statements (PGlite's `query` takes one statement at a time), for
 * `dialect` (PostgreSQL unless given). Every statement is `IF NOT EXISTS`, so re-running is a no-op.
 */
export function outboxMigrationStatements(
  options: OutboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): MigrationStep[] {
  if (dialect.name === 'mysql') {
    checkMysqlSchema(options.schema);
    return mysqlOutboxStatements(options);
  }
  const n = outboxTableNames(options);
  return [
    ...(n.schema !== undefined ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema}`] : []),
    `CREATE TABLE IF NOT EXISTS ${n.table} (
  id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id          UUID NOT NULL UNIQUE,
  aggregate_type    TEXT NOT NULL,
  aggregate_id      TEXT NOT NULL,
  aggregate_version BIGINT NULL,
  event_type        TEXT NOT NULL,
  schema_version    INTEGER NOT NULL,
  payload           JSONB NOT NULL,
  occurred_at       TIMESTAMPTZ NOT NULL,
  trace_id          TEXT NULL,
  correlation_id    TEXT NULL,
  causation_id      TEXT NULL,
  headers           JSONB NOT NULL DEFAULT '{}'::jsonb,
  status            TEXT NOT NULL DEFAULT 'READY' CHECK (status IN ('READY', 'PROCESSING', 'SENT', 'DEAD')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  available_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  locked_until      TIMESTAMPTZ NULL,
  lease_token       UUID NULL,
  last_error        TEXT NULL,
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  sent_at           TIMESTAMPTZ NULL
)`,
    // Serves the relay's claim scan: READY and PROCESSING rows in id order (partial, so SENT rows
    // cost nothing). The predicate says NOT IN ('SENT', 'DEAD') rather than IN ('READY',
    // 'PROCESSING'), the same rows: without statistics (PGlite, a fresh table) the planner guesses
    // the former matches most rows and the latter almost none, and only the former makes it walk
    // this index in id order and stop at a full batch instead of reading the whole backlog.
    `CREATE INDEX IF NOT EXISTS ${n.claimIndex} ON ${n.table} (id) INCLUDE (status, available_at, locked_until) WHERE status NOT IN ('SENT', 'DEAD')`,
    // Replaced by the index above (same rows, the predicate spelled the other way).
    dropIndex(n.schema, n.legacyClaimIndex),
    // Serves the per-aggregate "is an earlier event unsent or DEAD?" check and chaining within a
    // batch. DEAD rows are in it because they block their aggregate until revived.
    `CREATE INDEX IF NOT EXISTS ${n.aggregateIndex} ON ${n.table} (aggregate_type, aggregate_id, id) WHERE status <> 'SENT'`,
    // Replaced by the index above (it left DEAD rows out).
    dropIndex(n.schema, n.legacyAggregateIndex),
    // Serves retention cleanup.
    `CREATE INDEX IF NOT EXISTS ${n.sentIndex} ON ${n.table} (sent_at) WHERE status = 'SENT'`,
    // Serves lease renewals, SENT marks and releases: one claim's rows by its token. Without it a
    // renewal reads every open row (the claim index) to find its own. Only leased rows are in it.
    `CREATE INDEX IF NOT EXISTS ${n.leaseIndex} ON ${n.table} (lease_token) WHERE status = 'PROCESSING'`,
    aggregateVersionTableStatement(n.versionTable),
  ];
}

/** The per-aggregate version counter of `assignAggregateVersion`; its row lock serialises writers of one aggregate. */
export function aggregateVersionTableStatement(
  versionTable: string,
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  if (dialect.name === 'mysql') {
    return `CREATE TABLE IF NOT EXISTS ${versionTable} (
  aggregate_type VARCHAR(255) NOT NULL,
  aggregate_id   VARCHAR(255) NOT NULL,
  version        BIGINT NOT NULL,
  PRIMARY KEY (aggregate_type, aggregate_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  }
  return `CREATE TABLE IF NOT EXISTS ${versionTable} (
  aggregate_type TEXT NOT NULL,
  aggregate_id   TEXT NOT NULL,
  version        BIGINT NOT NULL,
  PRIMARY KEY (aggregate_type, aggregate_id)
)`;
}

/**
 * MySQL 8 / MariaDB: no partial indexes, identity columns or CREATE INDEX IF NOT EXISTS (MySQL),
 * so the indexes are declared with the table. Text that is compared or indexed is VARCHAR(255)
 * with a binary collation (case- and accent-sensitive, as on PostgreSQL); timestamps are
 * DATETIME(3) in UTC; payload and headers are JSON (MariaDB: LONGTEXT checked by JSON_VALID,
 * stored as the writer serialised them). Every value is written by evgen's statements, so no
 * column needs an expression default (MySQL < 8.0.13 has none).
 */
function mysqlOutboxStatements(options: OutboxTableOptions): MigrationStep[] {
  const n = outboxTableNames(options, MYSQL_DIALECT);
  const table = options.table ?? 'outbox_event';
  const q = MYSQL_DIALECT.quoteIdentifier;
  return [
    ...(n.schema !== undefined
      ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema} DEFAULT CHARACTER SET utf8mb4`]
      : []),
    `CREATE TABLE IF NOT EXISTS ${n.table} (
  id                BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  event_id          CHAR(36) CHARACTER SET ascii NOT NULL,
  aggregate_type    VARCHAR(255) NOT NULL,
  aggregate_id      VARCHAR(255) NOT NULL,
  aggregate_version BIGINT NULL,
  event_type        VARCHAR(255) NOT NULL,
  schema_version    INT NOT NULL,
  payload           JSON NOT NULL,
  occurred_at       DATETIME(3) NOT NULL,
  trace_id          TEXT NULL,
  correlation_id    TEXT NULL,
  causation_id      TEXT NULL,
  headers           JSON NOT NULL,
  status            VARCHAR(10) CHARACTER SET ascii NOT NULL DEFAULT 'READY',
  attempts          INT NOT NULL DEFAULT 0,
  available_at      DATETIME(3) NOT NULL,
  locked_until      DATETIME(3) NULL,
  lease_token       CHAR(36) CHARACTER SET ascii NULL,
  last_error        TEXT NULL,
  created_at        DATETIME(3) NOT NULL,
  sent_at           DATETIME(3) NULL,
  UNIQUE KEY ${q(`${table}_event_id_key`)} (event_id),
  -- The claim scan: open rows by status, then in id order.
  KEY ${n.claimIndex} (status, id),
  -- The per-aggregate "is an earlier event unsent or DEAD?" check and chaining within a batch.
  KEY ${n.aggregateIndex} (aggregate_type, aggregate_id, status, id),
  -- Retention cleanup.
  KEY ${n.sentIndex} (status, sent_at),
  -- SENT marks and lease renewals find a claim's rows by its token; with status in the key, a
  -- renewal reads (and locks) only its own claim's rows.
  KEY ${n.leaseIndex} (lease_token, status),
  CONSTRAINT ${q(`${table}_status_check`)} CHECK (status IN ('READY', 'PROCESSING', 'SENT', 'DEAD'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    mysqlLeaseIndexUpgrade(options.schema, table, n.leaseIndex),
    // Per-aggregate version counter; its row lock serialises writers of one aggregate.
    aggregateVersionTableStatement(n.versionTable, MYSQL_DIALECT),
  ];
}

/**
 * A table created before the lease index covered `status` gets it replaced. On `(lease_token)`
 * alone, `lease_token = ? AND status = 'PROCESSING'` (the lease renewal) was planned as an
 * intersection with the claim index, so the UPDATE locked every PROCESSING row, other relays'
 * included, and concurrent relays deadlocked (1213). MySQL has no `… INDEX IF NOT EXISTS`, so
 * the ALTER is chosen from information_schema (none when the index is already right).
 */
function mysqlLeaseIndexUpgrade(
  schema: string | undefined,
  table: string,
  leaseIndex: string,
): MigrationStep {
  // Names enter the SELECT as string literals (the script form cannot bind them), so only
  // checked identifiers: the index's quoted name unquoted, the schema and table checked here.
  const name = leaseIndex.slice(1, -1);
  const alter = `ALTER TABLE ${MYSQL_DIALECT.qualifiedName(schema, table)}`;
  const add = `ADD KEY ${leaseIndex} (lease_token, status)`;
  return {
    comment:
      'A table created with the earlier lease index (lease_token alone) gets (lease_token, status).',
    chooseDdl: `SELECT CASE
    WHEN SUM(SEQ_IN_INDEX = 2 AND COLUMN_NAME = 'status') > 0 THEN NULL
    WHEN COUNT(*) > 0 THEN '${alter} DROP KEY ${leaseIndex}, ${add}'
    ELSE '${alter} ${add}' END AS ddl
  FROM information_schema.STATISTICS
  WHERE TABLE_SCHEMA = ${schema !== undefined ? `'${checkIdentifier(schema)}'` : 'DATABASE()'} AND TABLE_NAME = '${checkIdentifier(table)}' AND INDEX_NAME = '${name}'`,
  };
}

/**
 * A step as script text for the mysql client, which runs PREPARE: the chosen DDL (or `DO 0`
 * when there is none) is prepared from a user variable and executed.
 */
function stepScript(step: MigrationStep): string[] {
  if (typeof step === 'string') return [step];
  return [
    `-- ${step.comment}\nSET @evgen_ddl = COALESCE((${step.chooseDdl}), 'DO 0')`,
    'PREPARE evgen_ddl FROM @evgen_ddl',
    'EXECUTE evgen_ddl',
    'DEALLOCATE PREPARE evgen_ddl',
  ];
}

/** Drops an index of an earlier schema version (an index lives in its table's schema). */
function dropIndex(schema: string | undefined, index: string): string {
  return `DROP INDEX IF EXISTS ${schema !== undefined ? `${schema}.` : ''}${index}`;
}

/** The migration as one SQL script (for `outbox/migration.sql` and other migration tools). */
export function outboxMigrationSql(
  options: OutboxTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  return outboxMigrationStatements(options, dialect)
    .flatMap(stepScript)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/**
 * Creates the outbox tables if missing, in the database's dialect, under a lock keyed by the
 * table name, so concurrent callers (several service instances starting at once) queue up
 * instead of racing on `CREATE … IF NOT EXISTS`. On MySQL/MariaDB a server without
 * `FOR UPDATE SKIP LOCKED` is refused first (UnsupportedDatabaseVersionError), and so is one
 * writing its binary log by statement (UnsupportedDatabaseSettingError).
 */
export async function migrateOutbox(db: Database, options: OutboxTableOptions = {}): Promise<void> {
  const statements = outboxMigrationStatements(options, db.dialect);
  const key = outboxTableNames(options).key;
  await runLockedMigration(db, `evgen:migrate:${key}`, statements);
}
