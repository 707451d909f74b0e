/**
 * Where HTTP idempotency keys live: one row per key (the key is the primary key, so the unique
 * constraint is the arbiter between racing requests). Schema and table names are the only
 * configurable SQL text and pass through `quoteIdentifier`.
 */
import { POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';

/** Default table name. */
export const DEFAULT_IDEMPOTENCY_TABLE = 'idempotency_key';

/** A key's states: IN_PROGRESS (leased by one execution) → COMPLETED (response stored). */
export const IDEMPOTENCY_STATUSES = ['IN_PROGRESS', 'COMPLETED'] as const;
export type IdempotencyStatus = (typeof IDEMPOTENCY_STATUSES)[number];

export interface IdempotencyTableOptions {
  /** Schema (a database on MySQL/MariaDB) of the idempotency table; defaults to the connection's. */
  readonly schema?: string;
  /** Table name; defaults to `idempotency_key`. */
  readonly table?: string;
}

/** Quoted, validated names of everything the idempotency table owns. */
interface IdempotencyTableNames {
  /** `"schema"."idempotency_key"` */
  readonly table: string;
  /** Retention cleanup's index (unqualified: an index lives in its table's schema). */
  readonly createdIndex: string;
  /** Quoted schema name, when one was given. */
  readonly schema?: string;
  /** Stable text identifying this table, for migration-lock keys. */
  readonly key: string;
}

export function idempotencyTableNames(
  options: IdempotencyTableOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): IdempotencyTableNames {
  const table = options.table ?? DEFAULT_IDEMPOTENCY_TABLE;
  const { schema } = options;
  return {
    table: dialect.qualifiedName(schema, table),
    createdIndex: dialect.quoteIdentifier(`${table}_created_idx`),
    ...(schema !== undefined ? { schema: dialect.quoteIdentifier(schema) } : {}),
    key: `${schema ?? ''}.${table}`,
  };
}
