/**
 * What an operator asks of an outbox: how much is waiting and for how long, which aggregates are
 * stuck behind a DEAD row, and who holds leases. `outboxStats` gives the counts; this adds the
 * breakdowns behind `evgen outbox status`. Read-only, a few scans: not for a hot path.
 */
import type { Database } from '../db/database.js';
import { mysqlAgeMs } from '../db/sql-timestamp.js';
import { outboxStats, type OutboxStats } from './outbox-stats.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

interface DeadByAggregateType {
  readonly aggregateType: string;
  /** DEAD rows of this aggregate type. */
  readonly dead: number;
  /** Distinct aggregates with a DEAD row: their later rows wait until it is revived. */
  readonly aggregates: number;
  /** ISO-8601 UTC creation time of the oldest DEAD row. */
  readonly oldestCreatedAt: string;
}

/** Rows held under one lease token: one claim of one relay, live until `lockedUntil`. */
interface OutboxLease {
  readonly leaseToken: string;
  readonly rows: number;
  /** ISO-8601 UTC end of the lease (the latest of its rows). */
  readonly lockedUntil: string;
}

export interface OutboxStatusReport extends OutboxStats {
  /** Age in ms of the oldest READY row, or null when there is none. */
  readonly oldestReadyAgeMs: number | null;
  /** Unsent rows queued behind a DEAD row of the same aggregate. */
  readonly blockedByDead: number;
  /** Sorted by aggregate type. */
  readonly deadByAggregateType: readonly DeadByAggregateType[];
  /** Live leases (PROCESSING rows whose lease has not run out), sorted by lease end. */
  readonly leases: readonly OutboxLease[];
}

export async function outboxStatus(
  db: Database,
  options: OutboxTableOptions = {},
): Promise<OutboxStatusReport> {
  const { table } = outboxTableNames(options, db.dialect);
  const { isoTimestamp, quoteIdentifier: q } = db.dialect;
  const mysql = db.dialect.name === 'mysql';
  /** Text of a count or other number (MySQL has no `::text`). */
  const text = (expression: string) =>
    mysql ? `CAST(${expression} AS CHAR)` : `(${expression})::text`;
  const stats = await outboxStats(db, options);
  const ready = await db.query<{ age: string | null }>(
    `SELECT ${mysql ? mysqlAgeMs('min(created_at)') : text('extract(epoch FROM now() - min(created_at)) * 1000')} AS age
       FROM ${table} WHERE status = 'READY'`,
  );
  const dead = await db.query<{
    aggregateType: string;
    dead: string;
    aggregates: string;
    oldestCreatedAt: string;
  }>(
    `SELECT aggregate_type AS ${q('aggregateType')}, ${text('count(*)')} AS dead,
            ${text('count(DISTINCT aggregate_id)')} AS aggregates, ${isoTimestamp('min(created_at)')} AS ${q('oldestCreatedAt')}
       FROM ${table} WHERE status = 'DEAD'
      GROUP BY aggregate_type ORDER BY aggregate_type${mysql ? '' : ' COLLATE "C"'}`,
  );
  const blocked = await db.query<{ blocked: string }>(
    `SELECT ${text('count(*)')} AS blocked FROM ${table} waiting
      WHERE waiting.status IN ('READY', 'PROCESSING')
        AND EXISTS (SELECT 1 FROM ${table} d WHERE d.status = 'DEAD'
                      AND d.aggregate_type = waiting.aggregate_type
                      AND d.aggregate_id = waiting.aggregate_id AND d.id < waiting.id)`,
  );
  const leases = await db.query<{ leaseToken: string; rows: string; lockedUntil: string }>(
    `SELECT ${mysql ? 'lease_token' : 'lease_token::text'} AS ${q('leaseToken')}, ${text('count(*)')} AS ${q('rows')}, ${isoTimestamp('max(locked_until)')} AS ${q('lockedUntil')}
       FROM ${table}
      WHERE status = 'PROCESSING' AND lease_token IS NOT NULL AND locked_until > ${mysql ? 'UTC_TIMESTAMP(3)' : 'now()'}
      GROUP BY lease_token ORDER BY max(locked_until), lease_token`,
  );
  const age = ready.rows[0]?.age;
  return {
    ...stats,
    oldestReadyAgeMs: age == null ? null : Math.max(0, Math.round(Number(age))),
    blockedByDead: Number(blocked.rows[0]?.blocked ?? 0),
    deadByAggregateType: dead.rows.map((row) => ({
      ...row,
      dead: Number(row.dead),
      aggregates: Number(row.aggregates),
    })),
    leases: leases.rows.map((row) => ({ ...row, rows: Number(row.rows) })),
  };
}
