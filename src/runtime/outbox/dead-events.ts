/**
 * DEAD outbox rows: list them and revive them.
 *
 * A row goes DEAD when its publish failed in a way retrying cannot fix (a non-retryable error)
 * or it used up `maxAttempts` on message-specific failures. A DEAD row keeps blocking the later
 * rows of its aggregate (their order would break otherwise), so those wait; `blocked` says how
 * many. Reviving puts the row back to READY with `attempts` 0 and due at once: the relay publishes
 * it and then the rows that waited behind it, in order.
 */
import type { Database } from '../db/database.js';
import { notifyLocally } from '../db/local-notify.js';
import type { SqlDialect } from '../db/sql-dialect.js';
import { isUuid } from '../envelope-values.js';
import {
  DEFAULT_OUTBOX_NOTIFY_CHANNEL,
  outboxTableNames,
  type OutboxTableOptions,
} from './outbox-table.js';

export interface DeadOutboxEvent {
  /** Outbox row id (identity column), as a decimal string. */
  readonly id: string;
  readonly messageId: string;
  readonly eventType: string;
  readonly schemaVersion: number;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly aggregateVersion: number | null;
  /** Publish attempts made before it went DEAD. */
  readonly attempts: number;
  readonly lastError: string | null;
  /** ISO-8601 UTC, millisecond precision. */
  readonly createdAt: string;
  /** Unsent (READY or PROCESSING) rows of the same aggregate waiting behind this one. */
  readonly blocked: number;
}

interface DeadOutboxFilter {
  readonly aggregateType?: string;
  readonly aggregateId?: string;
  readonly eventType?: string;
}

export interface ListDeadOutboxOptions extends OutboxTableOptions, DeadOutboxFilter {
  /** At most this many rows, oldest (lowest id) first. Default 100. */
  readonly limit?: number;
  /** Only rows with a higher id (paging: pass the last id of the previous page). */
  readonly afterId?: string;
}

/** Which DEAD rows to revive: by outbox id, by messageId, or every one matching a filter. */
export type ReviveTarget =
  | { readonly ids: readonly string[] }
  | { readonly messageIds: readonly string[] }
  | ({ readonly all: true } & DeadOutboxFilter);

export interface ReviveOutboxOptions extends OutboxTableOptions {
  /** Channel to NOTIFY so running relays pick the rows up at once; `false` sends none. Default `evgen_outbox`. */
  readonly notifyChannel?: string | false;
}

/** A revived row: READY again with attempts 0. */
export interface RevivedOutboxEvent {
  readonly id: string;
  readonly messageId: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
}

const DIGITS = /^[0-9]{1,19}$/;

const isOutboxId = (id: string) => DIGITS.test(id);

function checkIds(ids: readonly string[], valid: (id: string) => boolean, what: string): void {
  for (const id of ids)
    if (typeof id !== 'string' || !valid(id))
      throw new TypeError(`invalid ${what} ${JSON.stringify(id)}`);
}

/** `AND column = $n` (`?` on MySQL) for each filter given; values are bind parameters. */
function filterSql(
  filter: DeadOutboxFilter,
  params: unknown[],
  alias: string,
  dialect: SqlDialect,
): string {
  const parts: string[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    params.push(value);
    const param = dialect.name === 'mysql' ? '?' : `$${params.length}::text`;
    parts.push(`AND ${alias}.${column} = ${param}`);
  };
  add('aggregate_type', filter.aggregateType);
  add('aggregate_id', filter.aggregateId);
  add('event_type', filter.eventType);
  return parts.join(' ');
}

/** DEAD rows, oldest first, each with the number of rows of its aggregate waiting behind it. */
export async function listDeadOutboxEvents(
  db: Database,
  options: ListDeadOutboxOptions = {},
): Promise<DeadOutboxEvent[]> {
  const { dialect } = db;
  const { table } = outboxTableNames(options, dialect);
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (options.afterId !== undefined) checkIds([options.afterId], isOutboxId, 'outbox id');
  const mysql = dialect.name === 'mysql';
  const params: unknown[] = mysql ? [options.afterId ?? '0'] : [limit, options.afterId ?? '0'];
  const filters = filterSql(options, params, 'd', dialect);
  if (mysql) params.push(limit);
  const q = dialect.quoteIdentifier;
  const text = (expression: string) =>
    mysql ? `CAST(${expression} AS CHAR)` : `(${expression})::text`;
  const result = await db.query<{
    id: string;
    messageId: string;
    eventType: string;
    schemaVersion: number | string;
    aggregateType: string;
    aggregateId: string;
    aggregateVersion: string | null;
    attempts: number | string;
    lastError: string | null;
    createdAt: string;
    blocked: string;
  }>(
    `SELECT ${text('d.id')} AS id, ${text('d.event_id')} AS ${q('messageId')}, d.event_type AS ${q('eventType')},
       d.schema_version AS ${q('schemaVersion')}, d.aggregate_type AS ${q('aggregateType')}, d.aggregate_id AS ${q('aggregateId')},
       ${text('d.aggregate_version')} AS ${q('aggregateVersion')}, d.attempts, d.last_error AS ${q('lastError')},
       ${dialect.isoTimestamp('d.created_at')} AS ${q('createdAt')},
       ${text(`(SELECT count(*) FROM ${table} w
         WHERE w.aggregate_type = d.aggregate_type AND w.aggregate_id = d.aggregate_id AND w.id > d.id
           AND w.status IN ('READY', 'PROCESSING'))`)} AS blocked
     FROM ${table} d
     WHERE d.status = 'DEAD' AND d.id > ${mysql ? '?' : '$2::bigint'} ${filters}
     ORDER BY d.id
     LIMIT ${mysql ? '?' : '$1::int'}`,
    params,
  );
  return result.rows.map((row) => ({
    ...row,
    schemaVersion: Number(row.schemaVersion),
    aggregateVersion: row.aggregateVersion === null ? null : Number(row.aggregateVersion),
    attempts: Number(row.attempts),
    blocked: Number(row.blocked),
  }));
}

/**
 * Puts DEAD rows back to READY: attempts 0, due now, no lease; `last_error` is kept until the next
 * attempt overwrites it. Rows that are not DEAD (already revived, SENT, unknown ids) are left
 * alone, so reviving twice is harmless. Resolves to the revived rows, by id.
 */
export async function reviveDeadOutboxEvents(
  db: Database,
  target: ReviveTarget,
  options: ReviveOutboxOptions = {},
): Promise<RevivedOutboxEvent[]> {
  if (db.dialect.name === 'mysql') return reviveOnMysql(db, target, options);
  const { table } = outboxTableNames(options);
  const params: unknown[] = [];
  let where: string;
  if ('ids' in target) {
    checkIds(target.ids, isOutboxId, 'outbox id');
    if (target.ids.length === 0) return [];
    params.push(`{${target.ids.join(',')}}`);
    where = `r.id = ANY($1::text::bigint[])`;
  } else if ('messageIds' in target) {
    checkIds(target.messageIds, isUuid, 'messageId');
    if (target.messageIds.length === 0) return [];
    params.push(`{${target.messageIds.join(',')}}`);
    where = `r.event_id = ANY($1::text::uuid[])`;
  } else if (target.all) {
    where = `TRUE ${filterSql(target, params, 'r', db.dialect)}`;
  } else {
    throw new TypeError('revive target must give ids, messageIds or all: true');
  }
  const channel = options.notifyChannel ?? DEFAULT_OUTBOX_NOTIFY_CHANNEL;
  params.push(channel === false ? null : channel);
  const result = await db.query<RevivedOutboxEvent>(
    `WITH revived AS (
       UPDATE ${table} r SET status = 'READY', attempts = 0, available_at = now(), locked_until = NULL, lease_token = NULL
       WHERE r.status = 'DEAD' AND ${where}
       RETURNING r.id, r.event_id, r.aggregate_type, r.aggregate_id
     )
     SELECT id::text AS id, event_id::text AS "messageId", aggregate_type AS "aggregateType", aggregate_id AS "aggregateId",
       CASE WHEN $${params.length}::text IS NULL THEN NULL ELSE pg_notify($${params.length}::text, '') END AS notified
     FROM revived ORDER BY id`,
    params,
  );
  return result.rows.map(({ id, messageId, aggregateType, aggregateId }) => ({
    id,
    messageId,
    aggregateType,
    aggregateId,
  }));
}

/**
 * MySQL/MariaDB: the DEAD rows locked and read, then revived, in one transaction (no UPDATE …
 * RETURNING); relays of this process are woken after the commit, others find the rows by polling.
 */
async function reviveOnMysql(
  db: Database,
  target: ReviveTarget,
  options: ReviveOutboxOptions,
): Promise<RevivedOutboxEvent[]> {
  const { table } = outboxTableNames(options, db.dialect);
  const params: unknown[] = [];
  let where: string;
  if ('ids' in target) {
    checkIds(target.ids, isOutboxId, 'outbox id');
    if (target.ids.length === 0) return [];
    params.push([...target.ids]);
    where = 'r.id IN (?)';
  } else if ('messageIds' in target) {
    checkIds(target.messageIds, isUuid, 'messageId');
    if (target.messageIds.length === 0) return [];
    params.push(target.messageIds.map((id) => id.toLowerCase()));
    where = 'r.event_id IN (?)';
  } else if (target.all) {
    where = `TRUE ${filterSql(target, params, 'r', db.dialect)}`;
  } else {
    throw new TypeError('revive target must give ids, messageIds or all: true');
  }
  const channel = options.notifyChannel ?? DEFAULT_OUTBOX_NOTIFY_CHANNEL;
  return db.transaction(async (tx) => {
    const found = await tx.query<RevivedOutboxEvent>(
      `SELECT CAST(r.id AS CHAR) AS id, r.event_id AS messageId, r.aggregate_type AS aggregateType,
         r.aggregate_id AS aggregateId
       FROM ${table} r WHERE r.status = 'DEAD' AND ${where} ORDER BY r.id FOR UPDATE`,
      params,
    );
    if (found.rows.length === 0) return [];
    await tx.query(
      `UPDATE ${table} SET status = 'READY', attempts = 0, available_at = UTC_TIMESTAMP(3),
         locked_until = NULL, lease_token = NULL
       WHERE status = 'DEAD' AND id IN (?)`,
      [found.rows.map((row) => row.id)],
    );
    if (channel !== false) tx.afterCommit?.(() => notifyLocally(channel));
    return found.rows.map(({ id, messageId, aggregateType, aggregateId }) => ({
      id,
      messageId,
      aggregateType,
      aggregateId,
    }));
  });
}
