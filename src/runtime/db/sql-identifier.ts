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
