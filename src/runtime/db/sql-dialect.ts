/**
 * The SQL dialects evgen speaks: PostgreSQL (a server or embedded PGlite) and MySQL/MariaDB.
 * Everything dialect-specific that is not a whole statement goes through here: how an identifier
 * is quoted, how a timestamp is rendered as ISO-8601, how a bind parameter is written.
 * Identifiers reach SQL only through `quoteIdentifier`, which refuses anything but a plain name.
 */
import { checkIdentifier } from './sql-identifier.js';

export type DialectName = 'postgres' | 'mysql';

export interface SqlDialect {
  readonly name: DialectName;
  /** `name` quoted for this dialect (`"name"` or `` `name` ``) after checking it is a plain identifier. */
  readonly quoteIdentifier: (name: string) => string;
  /** `schema.table` quoted (a MySQL schema is a database), or just the table when no schema is given. */
  readonly qualifiedName: (schema: string | undefined, table: string) => string;
  /**
   * A timestamp expression rendered as ISO-8601 in UTC with milliseconds
   * (`2026-01-02T03:04:05.678Z`), the form envelopes use. `expression` is SQL written by evgen.
   */
  readonly isoTimestamp: (expression: string) => string;
  /** The `index`-th (1-based) bind parameter: `$1` on PostgreSQL, `?` on MySQL (positional). */
  readonly param: (index: number) => string;
}

function qualified(quote: (name: string) => string) {
  return (schema: string | undefined, table: string) =>
    schema === undefined ? quote(table) : `${quote(schema)}.${quote(table)}`;
}

const quotePostgres = (name: string) => `"${checkIdentifier(name)}"`;

export const POSTGRES_DIALECT: SqlDialect = {
  name: 'postgres',
  quoteIdentifier: quotePostgres,
  qualifiedName: qualified(quotePostgres),
  isoTimestamp: (expression) =>
    `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  param: (index) => `$${index}`,
};

const quoteMysql = (name: string) => `\`${checkIdentifier(name)}\``;

/**
 * MySQL 8 and MariaDB. Timestamps are DATETIME(3) holding UTC (evgen's connections set the
 * session time zone to +00:00), so rendering needs no conversion.
 */
export const MYSQL_DIALECT: SqlDialect = {
  name: 'mysql',
  quoteIdentifier: quoteMysql,
  qualifiedName: qualified(quoteMysql),
  isoTimestamp: (expression) =>
    `CONCAT(LEFT(DATE_FORMAT(${expression}, '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')`,
  param: () => '?',
};

/** The dialect of a connection: what it declares, PostgreSQL when it declares none. */
export function dialectOf(queryable: { readonly dialect?: SqlDialect }): SqlDialect {
  return queryable.dialect ?? POSTGRES_DIALECT;
}
