/**
 * What the relay's parts share: the resolved options, the SQL, the bounded publisher, the
 * in-flight window, the outage state and the running totals. Built once by createOutboxRelay.
 */
import type { Database } from '../db/database.js';
import type { BoundedPublisher } from './bounded-publish.js';
import type { BrokerOutage } from './broker-outage.js';
import type { PublishWindow } from './publish-window.js';
import type { OutboxRelayHooks, ResolvedRelayOptions } from './relay-options.js';
import type { RelayStatements } from './claim-query.js';
import type { UnwrittenMarks } from './unwritten-marks.js';

/** Totals since the relay was created (mutable; `metrics()` hands out a copy). */
export interface RelayTotals {
  claimed: number;
  published: number;
  failed: number;
  dead: number;
  released: number;
  batches: number;
  errors: number;
  unavailable: number;
  leaseRenewals: number;
}

export interface RelayContext {
  readonly db: Database;
  readonly config: ResolvedRelayOptions;
  readonly hooks: OutboxRelayHooks;
  /** The relay's statements in the database's dialect, built once for its table. */
  readonly sql: RelayStatements;
  readonly publisher: BoundedPublisher;
  /** Unconfirmed publishes of every batch together (two batches overlap in the loop). */
  readonly window: PublishWindow;
  readonly outage: BrokerOutage;
  readonly totals: RelayTotals;
  /**
   * Batches of the loop's lanes being published now. A lane's claim may split (leave heads to the
   * other lane, ClaimedBatch) only while none is: a lane that is busy would not take them.
   */
  readonly publishing: { count: number };
  /** SENT marks of confirmed rows whose UPDATE failed, written before the next claim. */
  readonly unwritten: UnwrittenMarks;
  /** The injected clock's time, or null for the database clock (passed to SQL). */
  readonly now: () => Date | null;
  /** Epoch ms from the injected clock, else Date.now(). */
  readonly nowMs: () => number;
  /** Whether stop() was called: no new publish may start. */
  readonly isStopping: () => boolean;
  /** Counts an error and hands it to the onError hook. */
  readonly reportError: (error: unknown) => void;
}
