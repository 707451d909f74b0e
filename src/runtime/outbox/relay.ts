/**
 * The outbox relay: claims due rows, publishes them, and records the outcome.
 *
 * Guarantees: a row is marked SENT only after `publisher.publish()` resolved, so a crash can
 * cause a second publish (absorbed by the inbox) but never a lost event; rows of one aggregate
 * are published in id order, each only after the previous one was confirmed (or together through
 * `publishChain`, which stores a prefix of them), and never while an earlier row of that
 * aggregate is unsent or DEAD. Different aggregates are published concurrently, up to
 * `maxInFlight` unconfirmed publishes.
 *
 * Leases: a claim is valid for `leaseMs` and renewed (heartbeat) while the relay publishes, so a
 * crashed relay's rows are taken over by another relay within about `leaseMs`. A publish is
 * only started while the lease outlives its `publishTimeoutMs`, so no publish of this relay is
 * still awaited once another relay may have claimed its row.
 *
 * The parts live beside this file: options (relay-options), the publish timeout
 * (bounded-publish), one batch (relay-batch) with its lease (relay-lease), failure recording
 * (record-failure), SENT marks (sent-flusher) and grouping by aggregate (aggregate-chains), and
 * the loop (relay-loop) with its idle wait (wake-signal).
 *
 * SENT marks that fail to write (database cut, lock-wait timeout, deadlock) are kept and written
 * before the next claim (unwritten-marks), so a confirmed row is not published again after its
 * lease because the database was away for a moment.
 *
 * Failures: broker unavailability (refused, closed, publish or confirm timeout) gives the row
 * back with its attempts unchanged and makes the relay back off, one doubling step per failed
 * round (capped), until a publish is confirmed or the publisher's probe sees the broker reconnect
 * (outage-probe.ts) — an outage of any length ends in publishing.
 * Only message-specific failures count against `maxAttempts`.
 *
 * Start and stop follow the lifecycle every runner shares (delivery/runner-lifecycle.ts):
 * concurrent starts share one LISTEN and one loop, a stop waits for a start in progress.
 */
import { dialectOf } from '../db/sql-dialect.js';
import { InFlightWork } from '../delivery/in-flight.js';
import { assessHealth, isoSince, withinMs, type RunnerHealth } from '../delivery/runner-health.js';
import { RunnerLifecycle, type RunnerState } from '../delivery/runner-lifecycle.js';
import { outboxStats } from './outbox-stats.js';
import { boundedPublisher } from './bounded-publish.js';
import { BrokerOutage } from './broker-outage.js';
import { outboxTableNames } from './outbox-table.js';
import { observe } from './observe-hook.js';
import { outageProbe } from './outage-probe.js';
import { PublishWindow } from './publish-window.js';
import { runBatch, writeUnwrittenMarks, type BatchRun } from './relay-batch.js';
import type { RelayContext, RelayTotals } from './relay-context.js';
import { runRelayLoop } from './relay-loop.js';
import { relayStatements } from './relay-statements.js';
import {
  resolveRelayOptions,
  type OutboxRelayOptions,
  type RelayBatchResult,
} from './relay-options.js';
import { UnwrittenMarks, type SentMarks } from './unwritten-marks.js';
import { WakeSignal } from './wake-signal.js';

export * from './relay-options.js';

/** Totals since the relay was created. */
export interface RelayMetrics extends RelayBatchResult {
  readonly batches: number;
  readonly errors: number;
  /** Failed publishes that were broker unavailability (counted in `failed` too). */
  readonly unavailable: number;
  /** Lease renewals (heartbeats) written. */
  readonly leaseRenewals: number;
}

export interface OutboxRelay {
  /** Claims and publishes one batch; resolves when every claimed row is SENT, rescheduled, DEAD or released. */
  runOnce(): Promise<RelayBatchResult>;
  /** Starts the loop: LISTEN for wake-ups, poll as fallback. Idempotent; restartable after stop. */
  start(): Promise<void>;
  /** Where the relay's loop is in its lifecycle (for health and readiness checks). */
  readonly state: RunnerState;
  /**
   * Stops the loop and any runOnce in progress: no new publish starts, untried rows are released,
   * in-flight publishes are awaited (each is bounded by publishTimeoutMs) and recorded. With
   * `timeoutMs`, publishes still in flight after it are abandoned: their rows go back to READY
   * at once (lease cleared, the attempt kept but not a failure) and stop resolves.
   */
  stop(options?: RelayStopOptions): Promise<void>;
  metrics(): RelayMetrics;
  /**
   * Readiness and liveness as data: not ready while not running, while the broker is
   * unreachable (publishes failing for unavailability) or while the outbox's database does not
   * answer the backlog query within 2 s; the facts carry the backlog, the oldest unsent row's age
   * and the DEAD rows. See `createHealthEndpoints`.
   */
  health(): Promise<RunnerHealth>;
}

export interface RelayStopOptions {
  /** How long to wait for in-flight publishes before releasing their rows (default: wait for each to settle or time out). */
  readonly timeoutMs?: number;
}

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, hooks = {} } = options;
  const config = resolveRelayOptions(options);
  const totals: RelayTotals = {
    claimed: 0,
    published: 0,
    failed: 0,
    dead: 0,
    released: 0,
    batches: 0,
    errors: 0,
    unavailable: 0,
    leaseRenewals: 0,
  };
  let stopping = false;
  const active = new InFlightWork();
  let loop: Promise<void> | undefined;
  let stopTimeoutMs: number | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  const wakeSignal = new WakeSignal(() => stopping);
  const context: RelayContext = {
    db,
    config,
    hooks,
    sql: relayStatements(outboxTableNames(options, dialectOf(db)), dialectOf(db), {
      prepared: options.preparedStatements !== false,
      // Once per relay: the claims go on unnamed, so one report, not one per claim.
      onPreparedStatementsOff: (error) => context.reportError(error),
    }),
    publisher: boundedPublisher(options.publisher, config.publishTimeoutMs, config.timers),
    window: new PublishWindow(config.maxInFlight),
    outage: new BrokerOutage(
      () => wakeSignal.outageEnded(),
      () => probe?.watch(),
    ),
    totals,
    publishing: { count: 0 },
    unwritten: new UnwrittenMarks(),
    now: () => options.clock?.() ?? null,
    nowMs: () => (options.clock ? options.clock().getTime() : Date.now()),
    isStopping: () => stopping,
    reportError: (error: unknown) => {
      totals.errors++;
      observe(() => hooks.onError?.(error));
    },
  };
  const { reportError } = context;
  const publisherProbe = options.publisher.probe?.bind(options.publisher);
  const probe =
    publisherProbe === undefined
      ? undefined
      : outageProbe({
          outage: context.outage,
          probe: publisherProbe,
          nowMs: context.nowMs,
          isStopping: context.isStopping,
          onError: reportError,
        });

  /** One batch, tracked for stop(); the loop's lanes pass SENT marks from one claim to the next. */
  function runTracked(carried?: SentMarks, handOn = false): Promise<BatchRun> {
    return active.track(runBatch(context, carried, handOn));
  }
  const runOnce = () => runTracked().then(({ result }) => result);

  /** Ends the loop and any runOnce in progress; closes the LISTEN. */
  async function close(): Promise<void> {
    stopping = true;
    wakeSignal.interrupt();
    const timeoutMs = stopTimeoutMs;
    let timer: unknown;
    if (timeoutMs !== undefined) {
      timer = config.timers.setTimeout(() => context.publisher.abandonAll(), timeoutMs);
    }
    try {
      await loop?.catch(() => undefined);
      await active.drain();
      // Marks still kept from a database failure get one last try; rows left unmarked are
      // published again once their lease runs out (the inbox absorbs that).
      if (context.unwritten.size > 0) await writeUnwrittenMarks(context).catch(reportError);
    } finally {
      if (timer !== undefined) config.timers.clearTimeout(timer);
      loop = undefined;
      stopping = false;
      const unlistenNow = unlisten;
      unlisten = undefined;
      await unlistenNow?.();
    }
  }

  const lifecycle = new RunnerLifecycle(
    {
      async open(signal) {
        if (config.notifyChannel !== false) {
          try {
            unlisten = await db.listen(config.notifyChannel, () => wakeSignal.notify(), {
              onError: reportError,
            });
          } catch (error) {
            // Polling still delivers everything, only later.
            reportError(error);
          }
        }
        // A stop came meanwhile: it closes the LISTEN; no loop starts.
        if (!signal.aborted) loop = runRelayLoop(context, runTracked, wakeSignal);
      },
      close,
    },
    (event) => observe(() => hooks.onLifecycle?.(event)),
  );

  return {
    runOnce,
    get state() {
      return lifecycle.state;
    },
    start: () => lifecycle.start(),
    async stop(stopOptions: RelayStopOptions = {}) {
      const { timeoutMs } = stopOptions;
      if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
        throw new RangeError(`stop timeoutMs must be a non-negative number, got ${timeoutMs}`);
      }
      stopTimeoutMs = timeoutMs;
      // No loop to stop, but a runOnce may be in progress: it stops the same way.
      if (lifecycle.state === 'stopped') return close();
      return lifecycle.stop();
    },
    metrics: () => ({ ...totals }),
    async health() {
      const stats = await withinMs(
        outboxStats(db, options).then((value) => value as typeof value | undefined),
        HEALTH_QUERY_TIMEOUT_MS,
        undefined,
      );
      const since = context.outage.since;
      return {
        name: 'relay',
        ...assessHealth({
          state: lifecycle.state,
          inFlight: active.size,
          ...(since !== undefined && lifecycle.state === 'running'
            ? { brokerDisconnectedSince: isoSince(since) }
            : {}),
          databaseReachable: stats !== undefined,
          ...(stats === undefined
            ? {}
            : {
                outboxBacklog: stats.ready + stats.processing,
                oldestUnsentAgeMs: stats.oldestUnsentAgeMs,
                deadRows: stats.dead,
              }),
        }),
      };
    },
  };
}

/** How long a relay's health waits for the backlog query before it calls the database unreachable. */
const HEALTH_QUERY_TIMEOUT_MS = 2_000;
