/**
 * The outbox relay: claims due rows, publishes them, and records the outcome (design notes §6).
 *
 * Guarantees: a row is marked SENT only after `publisher.publish()` resolved, so a crash can
 * cause a second publish (absorbed by the inbox) but never a lost event; a crashed relay's rows
 * become claimable again when their lease expires; rows of one aggregate are published in id
 * order and never while an earlier row of that aggregate is unsent.
 *
 * Bounded: a publish that has not settled within `publishTimeoutMs` (< `leaseMs`) is a failed,
 * retryable attempt, and a publish is only started while enough lease remains for its timeout, so
 * no publish of this relay is still awaited once its lease may have passed to another relay.
 * `stop({ timeoutMs })` gives up on in-flight publishes after the timeout and releases the rows.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import { quoteIdentifier } from '../db/sql-identifier.js';
import { classifyError, describeError } from '../errors.js';
import type { OutboundMessage, Publisher } from '../publisher.js';
import { backoffDelayMs, type BackoffOptions } from './backoff.js';
import {
  abandonSql,
  claimSql,
  idArray,
  markFailedSql,
  markSentSql,
  releaseSql,
  toOutboundMessage,
  type ClaimedRow,
} from './claim-query.js';
import { OutboxPublishTimeoutError } from './relay-errors.js';
import {
  DEFAULT_OUTBOX_NOTIFY_CHANNEL,
  outboxTableNames,
  type OutboxTableOptions,
} from './outbox-table.js';

/** What happened to one failed publish. */
export interface PublishFailure {
  readonly error: unknown;
  /** true: the row went DEAD (attempts exhausted or the error is not retryable). */
  readonly dead: boolean;
  /** Delay before the next attempt, when not dead. */
  readonly retryInMs?: number;
}

/** Observability hooks; each is called synchronously. An exception thrown by one is ignored. */
export interface OutboxRelayHooks {
  onPublished?(message: OutboundMessage): void;
  onFailed?(message: OutboundMessage, failure: PublishFailure): void;
  /** After every runOnce, including empty ones. */
  onBatch?(result: RelayBatchResult): void;
  /** A database error in the relay loop (the loop keeps going after pollIntervalMs). */
  onError?(error: unknown): void;
}

/** Timer functions the relay uses for publish and stop timeouts; injectable so tests need not wait. */
export interface RelayTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_TIMERS: RelayTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface OutboxRelayOptions extends OutboxTableOptions {
  readonly db: Database;
  readonly publisher: Publisher;
  /** Rows claimed per round (default 100). */
  readonly batchSize?: number;
  /**
   * How long a claim is valid (default 30 000 ms). Must exceed the longest publish: once it has
   * expired another relay may claim the row, and this relay stops publishing the rest of its batch.
   */
  readonly leaseMs?: number;
  /**
   * A publish not settled after this long counts as a failed, retryable attempt (default
   * leaseMs / 2; must be less than leaseMs). A publish is started only if it would time out
   * before the lease ends; otherwise the row is given back untried.
   */
  readonly publishTimeoutMs?: number;
  /** Attempts before a row goes DEAD (default 10). */
  readonly maxAttempts?: number;
  /** Retry delay: min(cap, base·2^(n-1)) + jitter (default 1 s, 5 min, 1 s). */
  readonly backoff?: BackoffOptions;
  /** Idle wait between rounds when no NOTIFY arrives (default 1 000 ms). */
  readonly pollIntervalMs?: number;
  /** Channel to LISTEN on (default `evgen_outbox`); `false` polls only. */
  readonly notifyChannel?: string | false;
  /** Aggregates published in parallel within a batch (default 8); one aggregate is always sequential. */
  readonly concurrency?: number;
  /** Time source for leases, due checks and backoff; default is the database clock. For tests. */
  readonly clock?: () => Date;
  /** Uniform [0, 1) for jitter; default Math.random. For tests. */
  readonly random?: () => number;
  /** Timers for publish and stop timeouts (not for the poll interval); default the real ones. For tests. */
  readonly timers?: RelayTimers;
  readonly hooks?: OutboxRelayHooks;
}

/** Counts of one `runOnce()`. */
export interface RelayBatchResult {
  readonly claimed: number;
  readonly published: number;
  /** Failed and scheduled for retry. */
  readonly failed: number;
  /** Failed and moved to DEAD. */
  readonly dead: number;
  /**
   * Claimed but given back: untried (an earlier row of the aggregate failed, the relay stopped or
   * too little lease was left), or in flight when `stop({ timeoutMs })` gave up on it.
   */
  readonly released: number;
}

/** Totals since the relay was created. */
export interface RelayMetrics extends RelayBatchResult {
  readonly batches: number;
  readonly errors: number;
}

export interface OutboxRelay {
  /** Claims and publishes one batch; resolves when every claimed row is SENT, rescheduled, DEAD or released. */
  runOnce(): Promise<RelayBatchResult>;
  /** Starts the loop: LISTEN for wake-ups, poll as fallback. Idempotent. */
  start(): Promise<void>;
  /**
   * Stops the loop and any runOnce in progress: no new publish starts, untried rows are released,
   * in-flight publishes are awaited (each is bounded by publishTimeoutMs) and recorded. With
   * `timeoutMs`, publishes still in flight after it are abandoned: their rows go back to READY
   * at once (lease cleared, the attempt kept but not a failure) and stop resolves.
   */
  stop(options?: RelayStopOptions): Promise<void>;
  metrics(): RelayMetrics;
}

export interface RelayStopOptions {
  /** How long to wait for in-flight publishes before releasing their rows (default: wait for each to settle or time out). */
  readonly timeoutMs?: number;
}

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, capMs: 300_000, jitterMs: 1_000 };

/** Runs an observability hook; one that throws must not stop publishing or recording outcomes. */
function observe(hook: () => void): void {
  try {
    hook();
  } catch {
    // Ignored on purpose: metrics are never worth a stuck outbox row.
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, publisher, hooks = {} } = options;
  const names = outboxTableNames(options);
  const batchSize = Math.floor(positive('batchSize', options.batchSize ?? 100));
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const publishTimeoutMs = positive('publishTimeoutMs', options.publishTimeoutMs ?? leaseMs / 2);
  if (publishTimeoutMs >= leaseMs) {
    throw new RangeError(
      `publishTimeoutMs (${publishTimeoutMs}) must be less than leaseMs (${leaseMs}): a publish must end before another relay may claim its row`,
    );
  }
  const timers = options.timers ?? REAL_TIMERS;
  const maxAttempts = Math.floor(positive('maxAttempts', options.maxAttempts ?? 10));
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1_000);
  const concurrency = Math.floor(positive('concurrency', options.concurrency ?? 8));
  const notifyChannel = options.notifyChannel ?? DEFAULT_OUTBOX_NOTIFY_CHANNEL;
  if (notifyChannel !== false) quoteIdentifier(notifyChannel);
  const random = options.random ?? Math.random;
  const sql = {
    claim: claimSql(names),
    sent: markSentSql(names),
    failed: markFailedSql(names),
    release: releaseSql(names),
    abandon: abandonSql(names),
  };

  const totals = {
    claimed: 0,
    published: 0,
    failed: 0,
    dead: 0,
    released: 0,
    batches: 0,
    errors: 0,
  };
  let stopping = false;
  /** Called by stop() when its timeout passed: each gives up one awaited publish. */
  const abandonWaiters = new Set<() => void>();
  const active = new Set<Promise<unknown>>();
  let loop: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let wakePending = false;
  let wake: (() => void) | undefined;

  const now = () => options.clock?.() ?? null;
  const elapsedSince = (start: number) =>
    (options.clock ? options.clock().getTime() : Date.now()) - start;

  type PublishOutcome =
    | { readonly kind: 'published' }
    | { readonly kind: 'failed'; readonly error: unknown }
    | { readonly kind: 'abandoned' };

  /** The publish, bounded by publishTimeoutMs and by stop()'s timeout; whatever comes later is ignored. */
  function publishBounded(message: OutboundMessage): Promise<PublishOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: PublishOutcome) => {
        if (settled) return;
        settled = true;
        timers.clearTimeout(timer);
        abandonWaiters.delete(abandon);
        resolve(outcome);
      };
      const abandon = () => finish({ kind: 'abandoned' });
      const timer = timers.setTimeout(
        () => finish({ kind: 'failed', error: new OutboxPublishTimeoutError(publishTimeoutMs) }),
        publishTimeoutMs,
      );
      abandonWaiters.add(abandon);
      let publishing: Promise<void>;
      try {
        publishing = publisher.publish(message);
      } catch (error) {
        publishing = Promise.reject(error);
      }
      publishing.then(
        () => finish({ kind: 'published' }),
        (error: unknown) => finish({ kind: 'failed', error }),
      );
    });
  }

  function runOnce(): Promise<RelayBatchResult> {
    const run = runBatch();
    active.add(run);
    const untrack = () => active.delete(run);
    run.then(untrack, untrack);
    return run;
  }

  async function runBatch(): Promise<RelayBatchResult> {
    const token = randomUUID();
    const claimedAt = options.clock ? options.clock().getTime() : Date.now();
    const claimed = await db.query<ClaimedRow>(sql.claim, [batchSize, token, leaseMs, now()]);
    const rows = [...claimed.rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    const result = { claimed: rows.length, published: 0, failed: 0, dead: 0, released: 0 };

    // One chain per aggregate, in id order; chains run in parallel, rows of a chain one by one.
    const chains = new Map<string, ClaimedRow[]>();
    for (const row of rows) {
      const key = JSON.stringify([row.aggregate_type, row.aggregate_id]);
      const chain = chains.get(key);
      if (chain) chain.push(row);
      else chains.set(key, [row]);
    }
    const releasedIds: string[] = [];
    const abandonedIds: string[] = [];
    // SENT is recorded as each aggregate's run ends (not only at the end of the batch), so one
    // slow publish does not hold back the others' SENT marks. Marks that arrive while an UPDATE
    // is in flight are written together by the next one.
    let pendingSent: string[] = [];
    let flushing: Promise<void> | undefined;
    const flushErrors: unknown[] = [];
    const flushSent = () => {
      flushing ??= (async () => {
        while (pendingSent.length > 0) {
          const ids = pendingSent;
          pendingSent = [];
          try {
            await db.query(sql.sent, [idArray(ids), token, now()]);
          } catch (error) {
            // Left PROCESSING: republished after the lease, which the inbox absorbs.
            flushErrors.push(error);
          }
        }
      })().finally(() => {
        flushing = undefined;
      });
    };

    const runChain = async (chain: ClaimedRow[]) => {
      for (let index = 0; index < chain.length; index++) {
        const row = chain[index]!;
        // Stop before a publish that might outlive the lease (even if it times out) or the relay.
        if (stopping || elapsedSince(claimedAt) + publishTimeoutMs > leaseMs) {
          releasedIds.push(...chain.slice(index).map((r) => r.id));
          return;
        }
        const message = toOutboundMessage(row);
        const outcome = await publishBounded(message);
        if (outcome.kind === 'abandoned') {
          abandonedIds.push(row.id);
          releasedIds.push(...chain.slice(index + 1).map((r) => r.id));
          return;
        }
        if (outcome.kind === 'failed') {
          const { error } = outcome;
          const attempts = Number(row.attempts);
          const dead = attempts >= maxAttempts || classifyError(error) === 'non-retryable';
          const delay = dead ? 0 : backoffDelayMs(attempts, backoff, random);
          const { type, message: text } = describeError(error);
          await db.query(sql.failed, [
            row.id,
            token,
            dead ? 'DEAD' : 'READY',
            now(),
            delay,
            `${type}: ${text}`,
          ]);
          if (dead) result.dead++;
          else result.failed++;
          observe(() =>
            hooks.onFailed?.(message, dead ? { error, dead } : { error, dead, retryInMs: delay }),
          );
          // The rest of this aggregate must wait behind the failed row (unless it went DEAD,
          // in which case the next round picks them up in order).
          releasedIds.push(...chain.slice(index + 1).map((r) => r.id));
          return;
        }
        pendingSent.push(row.id);
        result.published++;
        observe(() => hooks.onPublished?.(message));
      }
    };

    const queue = [...chains.values()];
    const workers = Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
      for (let chain = queue.shift(); chain; chain = queue.shift()) {
        try {
          await runChain(chain);
        } finally {
          flushSent();
        }
      }
    });
    // Every chain runs to its end even if another failed to record its outcome.
    const settled = await Promise.allSettled(workers);
    while (pendingSent.length > 0 || flushing) {
      flushSent();
      await flushing;
    }
    if (releasedIds.length > 0) await db.query(sql.release, [idArray(releasedIds), token]);
    if (abandonedIds.length > 0) await db.query(sql.abandon, [idArray(abandonedIds), token, now()]);
    const rejected = settled.find(
      (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
    );
    if (rejected) throw rejected.reason;
    if (flushErrors.length > 0) throw flushErrors[0];
    result.released = releasedIds.length + abandonedIds.length;

    totals.batches++;
    for (const key of ['claimed', 'published', 'failed', 'dead', 'released'] as const)
      totals[key] += result[key];
    observe(() => hooks.onBatch?.(result));
    return result;
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (wakePending || stopping) {
        wakePending = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        wakePending = false;
        resolve();
      }
      wake = done;
    });
  }

  function notify() {
    if (wake) wake();
    else wakePending = true;
  }

  async function runLoop(): Promise<void> {
    while (!stopping) {
      let full = false;
      try {
        const result = await runOnce();
        full = result.claimed >= batchSize;
      } catch (error) {
        totals.errors++;
        observe(() => hooks.onError?.(error));
      }
      // A full batch means more is probably due: go again at once.
      if (!full && !stopping) await sleep(pollIntervalMs);
    }
  }

  return {
    runOnce,
    async start() {
      if (loop) return;
      stopping = false;
      if (notifyChannel !== false) {
        try {
          unlisten = await db.listen(notifyChannel, notify);
        } catch (error) {
          // Polling still delivers everything, only later.
          totals.errors++;
          observe(() => hooks.onError?.(error));
        }
      }
      loop = runLoop();
    },
    async stop(stopOptions: RelayStopOptions = {}) {
      const { timeoutMs } = stopOptions;
      if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
        throw new RangeError(`stop timeoutMs must be a non-negative number, got ${timeoutMs}`);
      }
      stopping = true;
      wake?.();
      const running = Promise.allSettled([loop, ...active]);
      let timer: unknown;
      if (timeoutMs !== undefined) {
        timer = timers.setTimeout(() => {
          for (const abandon of [...abandonWaiters]) abandon();
        }, timeoutMs);
      }
      try {
        await running;
      } finally {
        if (timer !== undefined) timers.clearTimeout(timer);
        loop = undefined;
        stopping = false;
        const close = unlisten;
        unlisten = undefined;
        await close?.();
      }
    },
    metrics: () => ({ ...totals }),
  };
}
