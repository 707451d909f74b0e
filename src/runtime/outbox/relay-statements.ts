/**
 * The relay's statements for the database's dialect, behind one interface: PostgreSQL runs each
 * as one statement (claim-query); MySQL/MariaDB has no UPDATE … RETURNING, so its claim is a short
 * transaction of a few statements (claim-query-mysql). Same rows, same promises.
 */
import type { Database } from '../db/database.js';
import type { SqlDialect } from '../db/sql-dialect.js';
import {
  abandonSql,
  claimSql,
  idArray,
  markDeferredSql,
  markFailedSql,
  markSentSql,
  releaseSql,
  renewLeaseSql,
  type ClaimedRow,
} from './claim-query.js';
import { mysqlRelayStatements } from './claim-query-mysql.js';
import type { OutboxTableNames } from './outbox-table.js';

/** What one claim asks for; `sentIds`/`sentToken`: an earlier batch's confirmed rows to mark SENT first. */
export interface ClaimRequest {
  readonly batchSize: number;
  readonly token: string;
  readonly leaseMs: number;
  /** The injected clock's time, or null for the database clock. */
  readonly now: Date | null;
  readonly sentIds: readonly string[];
  readonly sentToken: string | null;
}

/** `now` everywhere: the injected clock's time, or null for the database clock. */
export interface RelayStatements {
  /** Marks `sentIds` SENT, then leases due heads and the due rows behind them (see claim-query). */
  claim(db: Database, request: ClaimRequest): Promise<ClaimedRow[]>;
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
  /** Broker unavailable: back to READY after `delayMs`, the attempt given back. */
  deferred(
    db: Database,
    id: string,
    token: string,
    now: Date | null,
    delayMs: number,
    error: string,
  ): Promise<void>;
  /** Claimed but not tried: READY again, the attempt given back. */
  release(db: Database, ids: readonly string[], token: string): Promise<void>;
  /** Publish started but never settled before stop: due again at once, the attempt kept. */
  abandon(db: Database, ids: readonly string[], token: string, now: Date | null): Promise<void>;
  /** Extends the lease on every row this claim still holds. */
  renew(db: Database, token: string, leaseMs: number, now: Date | null): Promise<void>;
}

export function relayStatements(names: OutboxTableNames, dialect: SqlDialect): RelayStatements {
  if (dialect.name === 'mysql') return mysqlRelayStatements(names);
  const sql = {
    claim: claimSql(names),
    sent: markSentSql(names),
    failed: markFailedSql(names),
    deferred: markDeferredSql(names),
    release: releaseSql(names),
    abandon: abandonSql(names),
    renew: renewLeaseSql(names),
  };
  const run = async (db: Database, text: string, params: unknown[]) => {
    await db.query(text, params);
  };
  return {
    async claim(db, r) {
      const claimed = await db.query<ClaimedRow>(sql.claim, [
        r.batchSize,
        r.token,
        r.leaseMs,
        r.now,
        idArray(r.sentIds),
        r.sentToken,
      ]);
      return claimed.rows;
    },
    sent: (db, ids, token, now) => run(db, sql.sent, [idArray(ids), token, now]),
    failed: (db, id, token, status, now, delayMs, error) =>
      run(db, sql.failed, [id, token, status, now, delayMs, error]),
    deferred: (db, id, token, now, delayMs, error) =>
      run(db, sql.deferred, [id, token, now, delayMs, error]),
    release: (db, ids, token) => run(db, sql.release, [idArray(ids), token]),
    abandon: (db, ids, token, now) => run(db, sql.abandon, [idArray(ids), token, now]),
    renew: (db, token, leaseMs, now) => run(db, sql.renew, [token, leaseMs, now]),
  };
}
