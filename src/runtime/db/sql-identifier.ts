/**
 * Identifiers (schema and table names) are the only SQL text evgen builds from configuration.
 * They enter SQL only through these helpers (or a dialect's, see sql-dialect); every value goes
 * in as a bind parameter.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Returns `name` after checking it is a plain identifier (letters, digits, _); throws otherwise. */
export function checkIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new TypeError(
      `invalid SQL identifier ${JSON.stringify(name)}: use letters, digits and _ (not first), at most 63 characters`,
    );
  }
  return name;
}

/** Returns `name` double-quoted (PostgreSQL) after checking it is a plain identifier; throws otherwise. */
export function quoteIdentifier(name: string): string {
  return `"${checkIdentifier(name)}"`;
}

/** `"schema"."table"`, or just `"table"` when no schema is given (PostgreSQL quoting). */
export function qualifiedName(schema: string | undefined, table: string): string {
  return schema === undefined
    ? quoteIdentifier(table)
    : `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/** MySQL's and MariaDB's own schemas: evgen's tables never go there. */
const MYSQL_SYSTEM_SCHEMAS = ['mysql', 'information_schema', 'performance_schema', 'sys'];

/** Returns `schema` unless it is a MySQL/MariaDB system schema (compared case-insensitively); throws then. */
export function checkMysqlSchema(schema: string | undefined): string | undefined {
  if (schema !== undefined && MYSQL_SYSTEM_SCHEMAS.includes(schema.toLowerCase())) {
    throw new TypeError(
      `schema ${JSON.stringify(schema)} is a MySQL/MariaDB system schema (${MYSQL_SYSTEM_SCHEMAS.join(', ')}): the server's own tables live there; give the outbox and inbox a schema of their own`,
    );
  }
  return schema;
}
