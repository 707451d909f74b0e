/**
 * A `timestamptz` expression rendered by PostgreSQL as ISO-8601 in UTC with milliseconds
 * (`2026-01-02T03:04:05.678Z`), the form envelopes use, so query results need no Date round trip.
 * `expression` is SQL written by evgen (a column or a function of columns), never user input.
 */
export function isoTimestampSql(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
