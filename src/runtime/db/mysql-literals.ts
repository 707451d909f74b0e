/**
 * evgen's MySQL statements with their `?` parameters written in as literals that read the same
 * under every `sql_mode`.
 *
 * Why not leave it to the driver: mysql2 (and Knex, Kysely, Drizzle and TypeORM over it) formats
 * parameters on the client and escapes a quote in a string with a backslash. A server or session
 * with `NO_BACKSLASH_ESCAPES` in its `sql_mode` reads that backslash as a plain character, so the
 * quote ends the literal and the rest of the value runs as SQL: an event payload, an aggregate id,
 * a broker's message id or an HTTP Idempotency-Key could inject statements. mysql2 does not look
 * at the server's mode.
 *
 * So a string is written either quoted with its quotes doubled (the SQL standard's escape, which
 * every mode reads alike) when it holds nothing a mode or a placeholder scanner could read another
 * way, or else as its UTF-8 bytes in hex under a `_utf8mb4` introducer: no quote and no backslash
 * at all. The statement then goes to the driver without parameters.
 */
import { splitAtParameters } from '../adapters/positional-parameters.js';
import { mysqlTimestamp } from './sql-timestamp.js';

/**
 * Strings that may be quoted as they are (quotes doubled): no backslash (an escape in one mode,
 * a character in the other), no `?` (a placeholder to the libraries that scan the text again) and
 * no control character.
 */
const QUOTABLE = /^[^\\?\x00-\x1f\x7f]*$/;

function stringLiteral(value: string): string {
  if (QUOTABLE.test(value)) return `'${value.replaceAll("'", "''")}'`;
  // An empty hex literal is not valid SQL; the empty string is QUOTABLE, so never reached.
  return `_utf8mb4 X'${Buffer.from(value, 'utf8').toString('hex')}'`;
}

/** A number as SQL; a negative one in parentheses, so `x -?` cannot become a `--` comment. */
function numberLiteral(text: string): string {
  return text.startsWith('-') ? `(${text})` : text;
}

/** One parameter as a literal: the same values mysql2 formats, written without escapes. */
export function mysqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  switch (typeof value) {
    case 'string':
      return stringLiteral(value);
    case 'boolean':
      return value ? 'TRUE' : 'FALSE';
    case 'bigint':
      return numberLiteral(String(value));
    case 'number':
      if (!Number.isFinite(value))
        throw new TypeError(`a MySQL parameter must be a finite number (got ${value})`);
      return numberLiteral(String(value));
  }
  if (value instanceof Uint8Array) return `X'${Buffer.from(value).toString('hex')}'`;
  if (value instanceof Date) return stringLiteral(mysqlTimestamp(value));
  // An array fills `IN (?)` as a list, and an array of arrays `VALUES ?` as rows, as in mysql2.
  if (Array.isArray(value))
    return value
      .map((item: unknown) =>
        Array.isArray(item) ? `(${item.map(mysqlLiteral).join(', ')})` : mysqlLiteral(item),
      )
      .join(', ');
  throw new TypeError(
    `a MySQL parameter must be a string, number, bigint, boolean, Buffer, Date, array or null (got ${Object.prototype.toString.call(value)})`,
  );
}

/** Statements seen, cut at their parameters (evgen's texts are few; the cache stays small). */
const splits = new Map<string, readonly string[]>();
const MAX_CACHED_STATEMENTS = 512;

function piecesOf(text: string): readonly string[] {
  let pieces = splits.get(text);
  if (pieces === undefined) {
    pieces = splitAtParameters(text, 'mysql').pieces;
    if (splits.size >= MAX_CACHED_STATEMENTS) splits.clear();
    splits.set(text, pieces);
  }
  return pieces;
}

/**
 * `text` with each `?` outside quotes and comments replaced by its parameter as a literal.
 * Throws a TypeError when the count of `?` and of parameters differ (mysql2 would leave a `?`
 * unfilled or ignore a parameter).
 */
export function inlineMysqlParameters(text: string, params: readonly unknown[] = []): string {
  const pieces = piecesOf(text);
  if (pieces.length - 1 !== params.length)
    throw new TypeError(
      `this MySQL statement has ${pieces.length - 1} parameter(s) but was given ${params.length}: ${text.slice(0, 80)}`,
    );
  let sql = pieces[0]!;
  for (let i = 0; i < params.length; i++) sql += mysqlLiteral(params[i]) + pieces[i + 1]!;
  return sql;
}
