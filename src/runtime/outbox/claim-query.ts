/**
 * The relay's statements, dialect by dialect behind one interface (as kysely splits dialects):
 * this file holds what every dialect shares (the request, the statements, the claimed row),
 * claim-query-postgres and claim-query-mysql the SQL, relay-statements picks one. Same rows,
 * same promises on every dialect.
 */
import type { Database } from '../db/database.js';
import type { OutboundMessage } from '../publisher.js';

/** What one claim asks for; `sentIds`/`sentToken`: an earlier batch's confirmed rows to mark SENT first. */
export interface ClaimRequest {
  readonly batchSize: number;
  readonly token: string;
  readonly leaseMs: number;
  /** The injected clock's time, or null for the database clock. */
  readonly now: Date | null;
  readonly sentIds: readonly string[];
  readonly sentToken: string | null;
  /** Whether the claim may split (ClaimedBatch): another claim will take what it leaves. */
  readonly split?: boolean;
}

/**
 * What a claim leased, and whether it saw due rows it left (`moreDue`): rows behind a chain it cut
 * short, or heads it left to another claim. The relay claims again at once when it did.
 *
 * Which rows, on every dialect: heads (each aggregate's earliest unsent row, if due and not
 * locked) in id order, at most `batchSize`; behind each head, its run of due rows. With as many
 * heads as the batch, each head alone. With fewer, every aggregate free to claim was seen, and
 * each head's run may go `depth` = ceil(batchSize / half) rows deep, half = ceil(heads / 2). When
 * those rows are more than the batch and the request allows it (`split`), the claim SPLITS: it
 * takes the earlier half of the heads only and leaves the rest to another claim, the relay's other
 * lane, which would otherwise find every aggregate held by this one and claim nothing (with 200
 * aggregates and batches of 500, one claim held them all and the two lanes no longer overlapped).
 * Rows are taken position by position (every head's first row, then every second row, …) up to
 * the batch.
 */
export interface ClaimedBatch {
  readonly rows: ClaimedRow[];
  readonly moreDue: boolean;
}

/** How deep a claim that found `heads` (fewer than the batch) takes each head's run (ClaimedBatch). */
export function chainDepth(heads: number, batchSize: number): number {
  return Math.ceil(batchSize / Math.ceil(heads / 2));
}

/** `now` everywhere: the injected clock's time, or null for the database clock. */
export interface RelayStatements {
  /** Marks `sentIds` SENT, then leases due heads and the due rows behind them (see ClaimedBatch). */
  claim(db: Database, request: ClaimRequest): Promise<ClaimedBatch>;
  sent(db: Database, ids: readonly string[], token: string, now: Date | null): Promise<void>;
  /** Back to READY after `delayMs`, or DEAD; `error` becomes last_error. */
  failed(
    db: Database,
    id: string,
    token: string,
    status: 'READY' | 'DEAD',
    now: Date | null,
    delayMs: number,
    error: string,
  ): Promise<void>;
  /**
   * Broker unavailable: READY and due again at once, the attempt given back. When it is published
   * again is the relay's outage backoff's to say (in memory, ended early by a confirmed publish
   * or the probe's reconnect); a due time of its own would outlast an outage that ended early.
   */
  deferred(db: Database, id: string, token: string, now: Date | null, error: string): Promise<void>;
  /** Claimed but not tried: READY again, the attempt given back. */
  release(db: Database, ids: readonly string[], token: string): Promise<void>;
  /** Publish started but never settled before stop: due again at once, the attempt kept. */
  abandon(db: Database, ids: readonly string[], token: string, now: Date | null): Promise<void>;
  /** Extends the lease on every row this claim still holds. */
  renew(db: Database, token: string, leaseMs: number, now: Date | null): Promise<void>;
}

/** One claimed row as the claim query returns it. */
export interface ClaimedRow {
  readonly id: string;
  readonly event_id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly aggregate_version: string | null;
  readonly event_type: string;
  readonly schema_version: number;
  readonly payload: unknown;
  readonly occurred_at: string;
  readonly trace_id: string | null;
  readonly correlation_id: string | null;
  readonly causation_id: string | null;
  readonly headers: Record<string, string> | string;
  /** Attempts including the one this claim starts. */
  readonly attempts: number;
}

/** Rebuilds the envelope exactly as the writer returned it. */
export function toOutboundMessage(row: ClaimedRow): OutboundMessage {
  const headers =
    typeof row.headers === 'string'
      ? (JSON.parse(row.headers) as Record<string, string>)
      : row.headers;
  return {
    outboxId: row.id,
    envelope: {
      messageId: row.event_id,
      eventType: row.event_type,
      schemaVersion: Number(row.schema_version),
      aggregateType: row.aggregate_type,
      aggregateId: row.aggregate_id,
      ...(row.aggregate_version !== null
        ? { aggregateVersion: Number(row.aggregate_version) }
        : {}),
      occurredAt: row.occurred_at,
      ...(row.trace_id !== null ? { traceId: row.trace_id } : {}),
      ...(row.correlation_id !== null ? { correlationId: row.correlation_id } : {}),
      ...(row.causation_id !== null ? { causationId: row.causation_id } : {}),
      payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    },
    headers,
    attempts: Number(row.attempts) - 1,
  };
}
