/** The relay's options, their defaults and their checks. */
import type { LifecycleEvent } from '../delivery/runner-lifecycle.js';
import type { FailureClassifier } from '../delivery/failure.js';
import { OptionChecks } from '../delivery/runner-options.js';
import type { Database } from '../db/database.js';
import { quoteIdentifier } from '../db/sql-identifier.js';
import type { OutboundMessage, Publisher } from '../publisher.js';
import type { BackoffOptions, BackoffSettings } from '../backoff.js';
import { REAL_TIMERS, type RelayTimers } from './bounded-publish.js';
import { dialectOf } from '../db/sql-dialect.js';
import { checkIdlePollOptions } from './idle-poll-schedule.js';
import { DEFAULT_OUTBOX_NOTIFY_CHANNEL, type OutboxTableOptions } from './outbox-table.js';

export type { RelayTimers } from './bounded-publish.js';

/** What happened to one failed publish. */
export interface PublishFailure {
  readonly error: unknown;
  /** true: the row went DEAD (attempts exhausted or the error is not retryable). */
  readonly dead: boolean;
  /** Delay before the next attempt, when not dead. */
  readonly retryInMs?: number;
  /** true: the broker was unavailable (refused, closed, timed out); the row kept its attempts. */
  readonly unavailable?: boolean;
}

/** Counts of one `runOnce()`. */
export interface RelayBatchResult {
  readonly claimed: number;
  readonly published: number;
  /** Failed and scheduled for retry (broker unavailability included). */
  readonly failed: number;
  /** Failed and moved to DEAD. */
  readonly dead: number;
  /**
   * Claimed but given back: untried (an earlier row of the aggregate failed, the broker is
   * unavailable, the relay stopped or too little lease was left), or in flight when
   * `stop({ timeoutMs })` gave up on it.
   */
  readonly released: number;
}

/** Observability hooks; each is called synchronously. An exception thrown by one is ignored. */
export interface OutboxRelayHooks {
  /** After the broker confirmed a row's publish (the SENT mark follows with the next claim). */
  onPublished?(message: OutboundMessage): void;
  /**
   * After a publish failed: `failure.dead` when the row went DEAD, else `retryInMs` until its next
   * attempt, and `unavailable` when the broker was unavailable (the row kept its attempts).
   */
  onFailed?(message: OutboundMessage, failure: PublishFailure): void;
  /** After every runOnce, including empty ones. */
  onBatch?(result: RelayBatchResult): void;
  /**
   * Before each idle wait of the relay loop, with its length (the adaptive poll interval: from
   * `minPollIntervalMs` after work or a wake-up, doubling per empty claim up to `pollIntervalMs`).
   */
  onIdle?(waitMs: number): void;
  /** A database error in the relay loop (the loop keeps going after pollIntervalMs), or a lost LISTEN. */
  onError?(error: unknown): void;
  /** A lifecycle state change (starting, running, stopping, stopped), as every runner reports it. */
  onLifecycle?(event: LifecycleEvent): void;
}

export interface OutboxRelayOptions extends OutboxTableOptions {
  /** The outbox's database; `postgresDatabase(pool)` can LISTEN and is woken on commit, the others poll. */
  readonly db: Database;
  /** Where rows go: `rabbitRelayPublisher(…)`, `kafkaRelayPublisher(…)`, `broker.relayPublisher()` or your own. */
  readonly publisher: Publisher;
  /** Rows claimed per round (default 100). */
  readonly batchSize?: number;
  /**
   * How long a claim is valid without renewal (default 6 000 ms). While the relay publishes it
   * renews the lease (heartbeat), so this only bounds how long a crashed relay's rows wait
   * before another relay takes them.
   */
  readonly leaseMs?: number;
  /**
   * A publish not settled after this long counts as broker unavailability (default leaseMs / 2;
   * must be less than leaseMs). A publish is started only if it would time out before the
   * (renewed) lease ends; otherwise the row is given back untried.
   */
  readonly publishTimeoutMs?: number;
  /** Message-specific failed attempts before a row goes DEAD (default 10). */
  readonly maxAttempts?: number;
  /** Retry delay after a message-specific failure: min(cap, base·2^(n-1)) plus up to `jitter` of it (default 1 s, 5 min, 0.2). */
  readonly backoff?: BackoffOptions;
  /**
   * Delay after the broker was unavailable (refused, closed, publish or confirm timeout), by
   * consecutive failed rounds of this relay (all publishes that fail together are one round):
   * min(cap, base·2^(n-1)) plus up to `jitter` of it (default 500 ms, 30 s, 0.2); a confirmed
   * publish ends it. Such failures never use up attempts, so an outage of any length ends in
   * publishing, not in DEAD rows.
   */
  readonly unavailableBackoff?: BackoffOptions;
  /**
   * Longest idle wait between rounds when no NOTIFY arrives (default 1 000 ms): a row committed
   * where no wake-up reaches the relay is claimed within it.
   */
  readonly pollIntervalMs?: number;
  /**
   * Adaptive idle polling: the idle wait right after a claim found work or a wake-up arrived;
   * each claim that finds nothing doubles it, up to `pollIntervalMs`. Default 50 ms on
   * MySQL/MariaDB (no NOTIFY: a row written by another process is found only by polling, so
   * during steady traffic it is claimed about this soon), `pollIntervalMs` on PostgreSQL (a fixed
   * interval: NOTIFY wakes the relay). Equal to `pollIntervalMs`: a fixed interval.
   */
  readonly minPollIntervalMs?: number;
  /** Channel to LISTEN on (default `evgen_outbox`); `false` polls only. */
  readonly notifyChannel?: string | false;
  /**
   * Publishes awaiting their confirm at once, across aggregates (default 100). One aggregate's
   * rows go in id order: each after the previous one was confirmed, or, when the publisher has
   * `publishChain` (Kafka's), as many together as this leaves room for.
   */
  readonly maxInFlight?: number;
  /** Former name of `maxInFlight`. */
  readonly concurrency?: number;
  /** Time source for leases, due checks and backoff; default is the database clock. For tests. */
  readonly clock?: () => Date;
  /** Uniform [0, 1) for jitter; default Math.random. For tests. */
  readonly random?: () => number;
  /** Timers for publish and stop timeouts (not for the poll interval); default the real ones. For tests. */
  readonly timers?: RelayTimers;
  /** Observability callbacks: `onPublished`, `onFailed`, `onBatch`, `onIdle`, `onError`. */
  readonly hooks?: OutboxRelayHooks;
  /**
   * On `postgresDatabase(pool)`, run the relay's statements as named prepared statements (default
   * true; other databases ignore it). Behind a pooler in transaction mode (PgBouncer before 1.21,
   * or with `max_prepared_statements = 0`) names break; the relay notices the first "prepared
   * statement does not exist / already exists" (SQLSTATE 26000, 42P05), reports it once to
   * `onError`, runs that statement again unnamed and stays unnamed. `false` never prepares.
   */
  readonly preparedStatements?: boolean;
  /**
   * Your say in what a failed publish means, asked before evgen's own classification (the one
   * every consumer uses): `'non-retryable'` makes the row DEAD at once, `'unavailable'` an outage
   * (attempts kept), `'retryable'` a retry; `undefined` leaves it to evgen.
   */
  readonly classify?: FailureClassifier;
}

export interface ResolvedRelayOptions {
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffSettings;
  readonly unavailableBackoff: BackoffSettings;
  readonly pollIntervalMs: number;
  readonly minPollIntervalMs: number;
  readonly notifyChannel: string | false;
  readonly maxInFlight: number;
  readonly random: () => number;
  readonly timers: RelayTimers;
  readonly classify: FailureClassifier | undefined;
}

const DEFAULT_LEASE_MS = 6_000;
/** The adaptive idle poll's default floor where no NOTIFY exists (MySQL/MariaDB). */
const DEFAULT_MYSQL_MIN_POLL_INTERVAL_MS = 50;
const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 1_000, capMs: 300_000, jitter: 0.2 };
const DEFAULT_UNAVAILABLE_BACKOFF: BackoffSettings = { baseMs: 500, capMs: 30_000, jitter: 0.2 };

export function resolveRelayOptions(options: OutboxRelayOptions): ResolvedRelayOptions {
  const checks = new OptionChecks('createOutboxRelay');
  const leaseMs = checks.positiveNumber('leaseMs', options.leaseMs, DEFAULT_LEASE_MS);
  const publishTimeoutMs = checks.positiveNumber(
    'publishTimeoutMs',
    options.publishTimeoutMs,
    leaseMs / 2,
  );
  if (publishTimeoutMs >= leaseMs)
    checks.fail(
      'publishTimeoutMs',
      publishTimeoutMs,
      `less than leaseMs (${leaseMs}): a publish must end before another relay may claim its row`,
    );
  const notifyChannel = options.notifyChannel ?? DEFAULT_OUTBOX_NOTIFY_CHANNEL;
  if (notifyChannel !== false) quoteIdentifier(notifyChannel);
  const pollIntervalMs = checks.positiveNumber('pollIntervalMs', options.pollIntervalMs, 1_000);
  const minPollIntervalMs =
    options.minPollIntervalMs ??
    (dialectOf(options.db).name === 'mysql'
      ? Math.min(DEFAULT_MYSQL_MIN_POLL_INTERVAL_MS, pollIntervalMs)
      : pollIntervalMs);
  checkIdlePollOptions({ floorMs: minPollIntervalMs, ceilingMs: pollIntervalMs });
  const backoff = checks.backoff('backoff', options.backoff);
  const unavailableBackoff = checks.backoff('unavailableBackoff', options.unavailableBackoff);
  return {
    batchSize: checks.positiveInteger('batchSize', options.batchSize, 100),
    leaseMs,
    publishTimeoutMs,
    maxAttempts: checks.positiveInteger('maxAttempts', options.maxAttempts, 10),
    backoff: { ...DEFAULT_BACKOFF, ...definedOnly(backoff) },
    unavailableBackoff: { ...DEFAULT_UNAVAILABLE_BACKOFF, ...definedOnly(unavailableBackoff) },
    pollIntervalMs,
    minPollIntervalMs,
    notifyChannel,
    maxInFlight: checks.positiveInteger(
      options.maxInFlight === undefined && options.concurrency !== undefined
        ? 'concurrency'
        : 'maxInFlight',
      options.maxInFlight ?? options.concurrency,
      100,
    ),
    random: checks.optionalFunction('random', options.random) ?? Math.random,
    timers: options.timers ?? REAL_TIMERS,
    classify: checks.optionalFunction('classify', options.classify),
  };
}

/** The settings that are given (an explicit `undefined` keeps the default). */
function definedOnly(options: BackoffOptions | undefined): BackoffOptions {
  return Object.fromEntries(
    Object.entries(options ?? {}).filter(([, value]) => value !== undefined),
  );
}
