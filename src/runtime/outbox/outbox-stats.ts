/** Backlog numbers for dashboards and health checks. */
import type { Database } from '../db/database.js';
import { mysqlAgeMs } from '../db/sql-timestamp.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

export interface OutboxStats {
  readonly ready: number;
  readonly processing: number;
  readonly sent: number;
  readonly dead: number;
  /** READY rows whose `available_at` has passed (publishable now, if their aggregate is not blocked). */
  readonly due: number;
  /** Age in ms of the oldest unsent (READY or PROCESSING) row, or null when there is none. */
  readonly oldestUnsentAgeMs: number | null;
}

/** Counts rows by status. One scan of the table: meant for a metrics endpoint, not a hot path. */
export async function outboxStats(
  db: Database,
  options: OutboxTableOptions = {},
): Promise<OutboxStats> {
  const { table } = outboxTableNames(options, db.dialect);
  const q = db.dialect.quoteIdentifier;
  const result = await db.query<Record<keyof OutboxStats, string | null>>(
    db.dialect.name === 'mysql'
      ? `SELECT
       CAST(COALESCE(SUM(status = 'READY'), 0) AS CHAR) AS ready,
       CAST(COALESCE(SUM(status = 'PROCESSING'), 0) AS CHAR) AS processing,
       CAST(COALESCE(SUM(status = 'SENT'), 0) AS CHAR) AS sent,
       CAST(COALESCE(SUM(status = 'DEAD'), 0) AS CHAR) AS dead,
       CAST(COALESCE(SUM(status = 'READY' AND available_at <= UTC_TIMESTAMP(3)), 0) AS CHAR) AS due,
       ${mysqlAgeMs("MIN(CASE WHEN status IN ('READY', 'PROCESSING') THEN created_at END)")} AS ${q('oldestUnsentAgeMs')}
     FROM ${table}`
      : `SELECT
       count(*) FILTER (WHERE status = 'READY')::text AS ready,
       count(*) FILTER (WHERE status = 'PROCESSING')::text AS processing,
       count(*) FILTER (WHERE status = 'SENT')::text AS sent,
       count(*) FILTER (WHERE status = 'DEAD')::text AS dead,
       count(*) FILTER (WHERE status = 'READY' AND available_at <= now())::text AS due,
       (extract(epoch FROM now() - min(created_at) FILTER (WHERE status IN ('READY', 'PROCESSING'))) * 1000)::text
         AS "oldestUnsentAgeMs"
     FROM ${table}`,
  );
  const row = result.rows[0];
  const count = (value: string | null | undefined) => Number(value ?? 0);
  return {
    ready: count(row?.ready),
    processing: count(row?.processing),
    sent: count(row?.sent),
    dead: count(row?.dead),
    due: count(row?.due),
    oldestUnsentAgeMs:
      row?.oldestUnsentAgeMs == null
        ? null
        : Math.max(0, Math.round(Number(row.oldestUnsentAgeMs))),
  };
}
