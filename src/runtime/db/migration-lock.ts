/**
 * Runs a migration's statements once even when several processes start at once: concurrent
 * `CREATE … IF NOT EXISTS` can still collide, so callers queue on a lock named after what they
 * migrate. PostgreSQL: a transaction-scoped advisory lock. MySQL/MariaDB: a named lock held by
 * the migrating connection (DDL commits implicitly there, so a transaction cannot scope it), after
 * checking the server is recent enough for evgen's SQL.
 */
import { createHash } from 'node:crypto';
import type { Database, Transaction } from './database.js';
import { dialectOf } from './sql-dialect.js';
import { requireSkipLocked } from './mysql-server-version.js';

/**
 * One step of a migration: a statement, or DDL chosen from the catalog at migration time. The
 * latter exists because MySQL lacks `… INDEX IF NOT EXISTS` and a statement cannot choose DDL
 * for itself without PREPARE, which drivers that send every statement as a prepared statement
 * (Prisma's MariaDB adapter) cannot run (1295): `chooseDdl` is a SELECT whose one row's `ddl`
 * column is the statement to run, or NULL for nothing.
 */
export type MigrationStep =
  | string
  | {
      readonly chooseDdl: string;
      /** Why the step exists, for the script form (a SQL comment). */
      readonly comment: string;
    };

/** How long a MySQL migration waits for another process's, seconds. */
const MYSQL_LOCK_WAIT_S = 60;

export async function runLockedMigration(
  db: Database,
  lockKey: string,
  steps: readonly MigrationStep[],
): Promise<void> {
  if (dialectOf(db).name === 'mysql') {
    await requireSkipLocked(db);
    // GET_LOCK names are at most 64 characters.
    const name = `evgen:${createHash('sha256').update(lockKey).digest('hex').slice(0, 40)}`;
    await db.transaction(async (tx) => {
      const locked = await tx.query<{ locked: number | string | null }>(
        'SELECT GET_LOCK(?, ?) AS locked',
        [name, MYSQL_LOCK_WAIT_S],
      );
      if (Number(locked.rows[0]?.locked) !== 1) {
        throw new Error(
          `migration of ${lockKey}: another process held the migration lock for ${MYSQL_LOCK_WAIT_S} s; try again`,
        );
      }
      try {
        for (const step of steps) await runStep(tx, step);
      } finally {
        await tx.query('SELECT RELEASE_LOCK(?)', [name]);
      }
    });
    return;
  }
  await db.transaction(async (tx) => {
    // A row of a plain type, not the lock function's void: data layers that map result columns
    // to their own types (Prisma) refuse a void column.
    await tx.query(`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext($1))`, [lockKey]);
    for (const step of steps) await runStep(tx, step);
  });
}

async function runStep(tx: Transaction, step: MigrationStep): Promise<void> {
  if (typeof step === 'string') {
    await tx.query(step);
    return;
  }
  const chosen = await tx.query<{ ddl: string | null }>(step.chooseDdl);
  const ddl = chosen.rows[0]?.ddl;
  if (typeof ddl === 'string' && ddl !== '') await tx.query(ddl);
}
