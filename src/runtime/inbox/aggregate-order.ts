/**
 * Per-aggregate ordering for consumers. Deduplication is by
 * message id; ordering is by the envelope's `aggregateVersion`, checked against the last version
 * this consumer applied for the aggregate, in the handler's own transaction.
 */
import type { Transaction } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import { EvgenError } from '../errors.js';
import { orderingTableName, type InboxTableOptions } from './inbox-tables.js';

/** `next`: apply it; `stale`: this version or a later one was already applied (skip); `gap`: an earlier version is missing. */
export type OrderVerdict = 'next' | 'stale' | 'gap';

export interface AggregateVersionKey extends InboxTableOptions {
  readonly consumer: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /** The event's `aggregateVersion`: 1 for an aggregate's first event. */
  readonly version: number;
  /**
   * When this consumer has never seen the aggregate, accept any version as the next one
   * (a consumer that starts mid-stream). Default false: only version 1 is next.
   */
  readonly acceptFirstSeen?: boolean;
  /**
   * Treat any version above the last applied one as next (a projection of full state, where
   * only "never older" matters: `… WHERE version < $new`). Default false: a gap is reported.
   */
  readonly allowGaps?: boolean;
}

/** An event arrived before an earlier version of its aggregate. Retryable: the missing one may still come. */
export class AggregateVersionGapError extends EvgenError {
  readonly retryable = true;
  readonly code = 'AggregateVersionGapError';
  constructor(
    readonly aggregateType: string,
    readonly aggregateId: string,
    readonly expected: number,
    readonly received: number,
  ) {
    super(
      `${aggregateType} ${aggregateId}: received version ${received}, expected ${expected}; retry after the missing versions`,
    );
    this.name = 'AggregateVersionGapError';
  }
}

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new TypeError(`aggregateVersion must be a positive integer, got ${String(version)}`);
  }
}

/**
 * Tells whether `version` is the next one for the aggregate. Locks the aggregate's version row
 * (creating it if needed) with SELECT … FOR UPDATE, so a concurrent transaction for the same
 * aggregate waits until this one commits and then judges against the updated version.
 */
export async function checkOrder(tx: Transaction, key: AggregateVersionKey): Promise<OrderVerdict> {
  checkVersion(key.version);
  const mysql = dialectOf(tx).name === 'mysql';
  const table = orderingTableName(key, dialectOf(tx));
  const params = [key.consumer, key.aggregateType, key.aggregateId];
  // Version 0 = "nothing applied yet"; the insert makes the row exist so it can be locked.
  // MySQL: a no-op update on the existing row, not INSERT IGNORE (which hides other errors).
  await tx.query(
    mysql
      ? `INSERT INTO ${table} (consumer, aggregate_type, aggregate_id, version, applied_at) VALUES (?, ?, ?, 0, UTC_TIMESTAMP(3))
         ON DUPLICATE KEY UPDATE version = version`
      : `INSERT INTO ${table} (consumer, aggregate_type, aggregate_id, version) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING`,
    params,
  );
  const locked = await tx.query<{ version: string | number | bigint }>(
    mysql
      ? `SELECT version FROM ${table} WHERE consumer = ? AND aggregate_type = ? AND aggregate_id = ? FOR UPDATE`
      : `SELECT version FROM ${table} WHERE consumer = $1 AND aggregate_type = $2 AND aggregate_id = $3 FOR UPDATE`,
    params,
  );
  const last = Number(locked.rows[0]?.version ?? 0);
  if (key.acceptFirstSeen === true && last === 0) return 'next';
  if (key.version <= last) return 'stale';
  return key.version === last + 1 || key.allowGaps === true ? 'next' : 'gap';
}

/** Records `version` as applied. Never moves the version backwards. Call in the transaction that applied it. */
export async function markApplied(
  tx: Transaction,
  key: AggregateVersionKey & { readonly messageId?: string },
): Promise<void> {
  checkVersion(key.version);
  const table = orderingTableName(key, dialectOf(tx));
  const params = [
    key.consumer,
    key.aggregateType,
    key.aggregateId,
    key.version,
    key.messageId ?? null,
  ];
  if (dialectOf(tx).name === 'mysql') {
    // Assignments run left to right: version last, so the others compare against the old one.
    await tx.query(
      `INSERT INTO ${table} (consumer, aggregate_type, aggregate_id, version, message_id, applied_at)
       VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))
       ON DUPLICATE KEY UPDATE
         message_id = IF(version < VALUES(version), VALUES(message_id), message_id),
         applied_at = IF(version < VALUES(version), VALUES(applied_at), applied_at),
         version = GREATEST(version, VALUES(version))`,
      params,
    );
    return;
  }
  await tx.query(
    `INSERT INTO ${table} AS current (consumer, aggregate_type, aggregate_id, version, message_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (consumer, aggregate_type, aggregate_id)
     DO UPDATE SET version = EXCLUDED.version, message_id = EXCLUDED.message_id, applied_at = now()
     WHERE current.version < EXCLUDED.version`,
    params,
  );
}

/**
 * Applies an event in aggregate order: `next` → runs `apply` and records the version (same
 * transaction) → `applied`; `stale` → skips → `stale`; `gap` → throws AggregateVersionGapError
 * (retryable), which rolls back the inbox row so the message comes again later.
 */
export async function applyInOrder(
  tx: Transaction,
  key: AggregateVersionKey & { readonly messageId?: string },
  apply: () => Promise<unknown>,
): Promise<'applied' | 'stale'> {
  const verdict = await checkOrder(tx, key);
  if (verdict === 'stale') return 'stale';
  if (verdict === 'gap') {
    const last = await lastAppliedVersion(tx, key);
    throw new AggregateVersionGapError(key.aggregateType, key.aggregateId, last + 1, key.version);
  }
  await apply();
  await markApplied(tx, key);
  return 'applied';
}

/** The last version the consumer applied for the aggregate, 0 when none. */
export async function lastAppliedVersion(
  tx: Transaction,
  key: Omit<AggregateVersionKey, 'version'>,
): Promise<number> {
  const table = orderingTableName(key, dialectOf(tx));
  const result = await tx.query<{ version: string | number | bigint }>(
    dialectOf(tx).name === 'mysql'
      ? `SELECT version FROM ${table} WHERE consumer = ? AND aggregate_type = ? AND aggregate_id = ?`
      : `SELECT version FROM ${table} WHERE consumer = $1 AND aggregate_type = $2 AND aggregate_id = $3`,
    [key.consumer, key.aggregateType, key.aggregateId],
  );
  return Number(result.rows[0]?.version ?? 0);
}
