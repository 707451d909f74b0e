/**
 * A `timestamptz` expression rendered by PostgreSQL as ISO-8601 in UTC with milliseconds
 * (`2026-01-02T03:04:05.678Z`), the form envelopes use, so query results need no Date round trip.
 * `expression` is SQL written by evgen (a column or a function of columns), never user input.
 */
export function isoTimestampSql(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * A point in time as a MySQL DATETIME(3) literal value in UTC (`2026-01-02 03:04:05.678`), for a
 * bind parameter: independent of the connection's time zone setting and of mysql2's `timezone`.
 */
export function mysqlTimestamp(at: Date | string): string {
  const iso = (typeof at === 'string' ? new Date(at) : at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

/** MySQL: milliseconds from the DATETIME(3) `expression` (UTC) to now, as text; NULL stays NULL. */
export function mysqlAgeMs(expression: string): string {
  return `CAST(TIMESTAMPDIFF(MICROSECOND, ${expression}, UTC_TIMESTAMP(3)) / 1000 AS CHAR)`;
}
