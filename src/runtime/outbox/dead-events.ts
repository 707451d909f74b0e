/**
 * DEAD outbox rows: list them and revive them.
 *
 * A row goes DEAD when its publish failed in a way retrying cannot fix (a non-retryable error)
 * or it used up `maxAttempts` on message-specific failures. A DEAD row keeps blocking the later
 * rows of its aggregate (their order would break otherwise), so those wait; `blocked` says how
 * many. Reviving puts the row back to READY with `attempts` 0 and due at once: the relay publishes
 * it and then the rows that waited behind it, in order.
 */
import { isoTimestampSql } from '../db/sql-timestamp.js';
import type { Database } from '../db/database.js';
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

export interface DeadOutboxFilter {
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

/** `AND column = $n` for each filter given; values are bind parameters. */
function filterSql(filter: DeadOutboxFilter, params: unknown[], alias: string): string {
  const parts: string[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    params.push(value);
    parts.push(`AND ${alias}.${column} = $${params.length}::text`);
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
  const { table } = outboxTableNames(options);
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (options.afterId !== undefined) checkIds([options.afterId], isOutboxId, 'outbox id');
  const params: unknown[] = [limit, options.afterId ?? '0'];
  const filters = filterSql(options, params, 'd');
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
    `SELECT d.id::text AS id, d.event_id::text AS "messageId", d.event_type AS "eventType",
       d.schema_version AS "schemaVersion", d.aggregate_type AS "aggregateType", d.aggregate_id AS "aggregateId",
       d.aggregate_version::text AS "aggregateVersion", d.attempts, d.last_error AS "lastError",
       ${isoTimestampSql('d.created_at')} AS "createdAt",
       (SELECT count(*) FROM ${table} w
         WHERE w.aggregate_type = d.aggregate_type AND w.aggregate_id = d.aggregate_id AND w.id > d.id
           AND w.status IN ('READY', 'PROCESSING'))::text AS blocked
     FROM ${table} d
     WHERE d.status = 'DEAD' AND d.id > $2::bigint ${filters}
     ORDER BY d.id
     LIMIT $1::int`,
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
    where = `TRUE ${filterSql(target, params, 'r')}`;
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
