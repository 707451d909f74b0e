/**
 * The transport-neutral core of request idempotency: one key → at most one committed execution.
 *
 * 1. Claim: the key is inserted IN_PROGRESS with a lease (its own short transaction, so other
 *    requests see it at once). The primary key decides between racing requests.
 * 2. Execute: in ONE transaction of the service's Database (node-postgres, PGlite, mysql2, or a
 *    data layer's: kyselyDatabase, knexDatabase, …) the key's row is locked while this execution
 *    still holds the lease, the handler runs (business writes, generated outbox writers), and its
 *    result is stored with the key COMPLETED. Business rows, events and the stored result commit
 *    together or not at all.
 * 3. A later request with the key: another fingerprint → `conflict`; COMPLETED → `replayed` with
 *    the stored result; IN_PROGRESS → `in-progress` (or it waits up to `waitMs` polling); a lease
 *    that expired without a commit (the process died) → taken over and executed once more.
 *
 * No two effects: only the lease holder's transaction can lock the row, a takeover skips a row a
 * live transaction holds, and completing is part of the business transaction. A handler that
 * throws (or a result not to be stored) rolls everything back and releases the key.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Transaction } from '../db/database.js';
import { sleep } from '../sleep.js';
import {
  completeRow,
  insertClaim,
  lockHeldLease,
  readRow,
  releaseRow,
  takeOverExpired,
} from './idempotency-statements.js';
import { idempotencyTableNames, type IdempotencyTableOptions } from './idempotency-table.js';
import { enterRequestScope } from './request-event-ids.js';

/** One request's identity: the client's key and the request's fingerprint. */
export interface IdempotentRequest {
  /** The client's key, already checked (see `parseIdempotencyKey`). */
  readonly key: string;
  /** The request's fingerprint (see `defaultRequestFingerprint`). */
  readonly fingerprint: string;
}

/** What the handler gets besides its transaction. */
export interface IdempotentHandlerContext extends IdempotentRequest {
  /** Executions of this key started so far, this one included (2+ after a takeover). */
  readonly attempt: number;
}

/** Runs the business work in `tx`; its result must survive JSON (it is stored as JSON text). */
export type IdempotentHandler<T> = (
  tx: Transaction,
  context: IdempotentHandlerContext,
) => Promise<T>;

export interface IdempotencyOptions extends IdempotencyTableOptions {
  /**
   * How long an execution holds the key before another may take it over, ms (default 30 000).
   * Only matters when a process died between claiming and committing: a live execution's
   * transaction keeps the row locked, and a takeover skips a locked row whatever the lease says.
   */
  readonly leaseMs?: number;
  /**
   * How long a request finding the key in progress waits for it to complete, ms (default 0:
   * answer `in-progress` at once, as the IETF draft's 409).
   */
  readonly waitMs?: number;
  /** First delay between looks while waiting, ms (default 25; doubles up to 500). */
  readonly pollMs?: number;
  /** Whether a fresh result is stored (default: every result). Not stored → rolled back, key released. */
  readonly shouldStore?: (result: unknown) => boolean;
}

export type IdempotentOutcome<T> =
  /** This request executed the handler; `stored` false: its transaction was rolled back. */
  | { readonly kind: 'fresh'; readonly result: T; readonly stored: boolean }
  /** An earlier request with the key completed; this is its stored result. */
  | { readonly kind: 'replayed'; readonly result: T }
  /** The key was used with another fingerprint: nothing ran. */
  | { readonly kind: 'conflict' }
  /** Another execution of the key is running (still, after waiting `waitMs`). */
  | { readonly kind: 'in-progress' };

const MAX_POLL_MS = 500;

/** A result the handler produced that must not be stored: carries it out of the rolled-back transaction. */
class NotStored extends Error {
  constructor(readonly result: unknown) {
    super('result not stored: transaction rolled back');
  }
}
/** Another execution took the key over before this one locked it: nothing ran. */
class LeaseLost extends Error {}
const LEASE_LOST = Symbol('lease lost');

function positive(name: string, value: number): number {
  if (!(value >= 0) || !Number.isFinite(value))
    throw new RangeError(`${name} must be a finite number ≥ 0, got ${String(value)}`);
  return value;
}

/** Runs `handler` at most once per key to a committed end (see the module comment). */
export async function runIdempotent<T>(
  db: Database,
  request: IdempotentRequest,
  handler: IdempotentHandler<T>,
  options: IdempotencyOptions = {},
): Promise<IdempotentOutcome<T>> {
  const { table } = idempotencyTableNames(options, db.dialect);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const waitMs = positive('waitMs', options.waitMs ?? 0);
  let delay = Math.max(1, positive('pollMs', options.pollMs ?? 25));
  const deadline = Date.now() + waitMs;
  const { key, fingerprint } = request;

  const execute = async (token: string): Promise<IdempotentOutcome<T> | typeof LEASE_LOST> => {
    try {
      const result = await db.transaction(async (tx) => {
        if (!(await lockHeldLease(tx, table, key, token))) throw new LeaseLost('lease lost');
        const row = await readRow(tx, table, key);
        enterRequestScope(tx, key, fingerprint);
        const value = await handler(tx, { key, fingerprint, attempt: row?.attempts ?? 1 });
        if (options.shouldStore !== undefined && !options.shouldStore(value))
          throw new NotStored(value);
        await completeRow(tx, table, key, JSON.stringify(value) ?? 'null');
        return value;
      });
      return { kind: 'fresh', result, stored: true };
    } catch (error) {
      if (error instanceof LeaseLost) return LEASE_LOST;
      // Best effort: when it fails the lease expires and the next request takes over.
      await releaseRow(db, table, key, token).catch(() => undefined);
      if (error instanceof NotStored)
        return { kind: 'fresh', result: error.result as T, stored: false };
      throw error;
    }
  };

  for (;;) {
    const token = randomUUID();
    // Read before inserting: on MySQL/MariaDB a duplicate-key INSERT waits for the row lock a
    // running execution holds, so a request in flight would block instead of being answered.
    const row = await readRow(db, table, key);
    if (row === undefined) {
      if (await insertClaim(db, table, key, fingerprint, token, leaseMs)) {
        const outcome = await execute(token);
        if (outcome !== LEASE_LOST) return outcome;
      }
      continue; // lost the race for the key (or the lease): look again
    }
    if (row.requestHash !== fingerprint) return { kind: 'conflict' };
    if (row.status === 'COMPLETED')
      return { kind: 'replayed', result: JSON.parse(row.response ?? 'null') as T };
    if (
      !row.leased &&
      (await db.transaction((tx) => takeOverExpired(tx, table, key, token, leaseMs)))
    ) {
      const outcome = await execute(token);
      if (outcome !== LEASE_LOST) return outcome;
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) return { kind: 'in-progress' };
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}
