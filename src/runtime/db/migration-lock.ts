/**
 * Runs a migration's statements once even when several processes start at once: concurrent
 * `CREATE … IF NOT EXISTS` can still collide, so callers queue on a lock named after what they
 * migrate. PostgreSQL: a transaction-scoped advisory lock. MySQL/MariaDB: a named lock held by
 * the migrating connection (DDL commits implicitly there, so a transaction cannot scope it), after
 * checking the server is recent enough for evgen's SQL.
 */
import { createHash } from 'node:crypto';
import type { Database } from './database.js';
import { dialectOf } from './sql-dialect.js';
import { requireSkipLocked } from './mysql-server-version.js';

/** How long a MySQL migration waits for another process's, seconds. */
const MYSQL_LOCK_WAIT_S = 60;

export async function runLockedMigration(
  db: Database,
  lockKey: string,
  statements: readonly string[],
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
        for (const statement of statements) await tx.query(statement);
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
    for (const statement of statements) await tx.query(statement);
  });
}
