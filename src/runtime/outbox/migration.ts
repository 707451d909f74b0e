/**
 * The outbox schema as idempotent SQL, and a migrate() that is safe to run
 * repeatedly and from several processes at once.
 */
import type { Database } from '../db/database.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

/**
 * The migration as separate statements (PGlite's `query` takes one statement at a time).
 * Every statement is `IF NOT EXISTS`, so re-running is a no-op.
 */
export function outboxMigrationStatements(options: OutboxTableOptions = {}): string[] {
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
    // Per-aggregate version counter; its row lock serialises writers of one aggregate.
    `CREATE TABLE IF NOT EXISTS ${n.versionTable} (
  aggregate_type TEXT NOT NULL,
  aggregate_id   TEXT NOT NULL,
  version        BIGINT NOT NULL,
  PRIMARY KEY (aggregate_type, aggregate_id)
)`,
  ];
}

/** Drops an index of an earlier schema version (an index lives in its table's schema). */
function dropIndex(schema: string | undefined, index: string): string {
  return `DROP INDEX IF EXISTS ${schema !== undefined ? `${schema}.` : ''}${index}`;
}

/** The migration as one SQL script (for `outbox/migration.sql` and other migration tools). */
export function outboxMigrationSql(options: OutboxTableOptions = {}): string {
  return outboxMigrationStatements(options)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/**
 * Creates the outbox tables if missing. Runs in one transaction under an advisory lock keyed by
 * the table name, so concurrent callers (several service instances starting at once) queue up
 * instead of racing on `CREATE … IF NOT EXISTS`.
 */
export async function migrateOutbox(db: Database, options: OutboxTableOptions = {}): Promise<void> {
  const statements = outboxMigrationStatements(options);
  const key = outboxTableNames(options).key;
  await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`evgen:migrate:${key}`]);
    for (const statement of statements) await tx.query(statement);
  });
}
