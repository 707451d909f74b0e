/**
 * What a library's raw-SQL call resolves to, as evgen's QueryResult. The libraries hand back
 * their driver's own result: node-postgres `{ rows, rowCount }`, mysql2 `[rows, fields]` for a
 * SELECT and `[{ affectedRows, … }, undefined]` for a write.
 */
import type { QueryResult } from '../db/database.js';
import type { SqlDialect } from '../db/sql-dialect.js';

interface PgResultLike {
  readonly rows?: unknown[];
  readonly rowCount?: number | null;
}

export function driverResult<R>(dialect: SqlDialect, result: unknown): QueryResult<R> {
  if (dialect.name === 'mysql') {
    const [first] = result as [unknown, unknown];
    if (Array.isArray(first)) return { rows: first as R[], rowCount: first.length };
    return { rows: [], rowCount: (first as { affectedRows?: number }).affectedRows ?? 0 };
  }
  const { rows = [], rowCount } = result as PgResultLike;
  return { rows: rows as R[], rowCount: rowCount ?? rows.length };
}
