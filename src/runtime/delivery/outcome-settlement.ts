/**
 * What every transport does with the pipeline's outcome, decided once: a handled, duplicate or
 * skipped delivery is settled (ack, offset commit) and counted; a handled one also tells the
 * circuit breaker the dependency works; an unavailable dependency puts the delivery back
 * unchanged and trips the breaker (no attempt used); a retry or a dead letter is handed to the
 * transport, which alone knows where copies go and counts them once they are carried out.
 * A transport supplies only the mechanics (`settle`, `putBack`, `settleFailure`) and its
 * observability events.
 */
import type { CircuitBreaker } from './circuit-breaker.js';
import type { DeliveryCounters, DeliveryOutcome } from './delivery-outcome.js';

type SettledOutcome = Extract<DeliveryOutcome, { kind: 'handled' | 'duplicate' }>;
type SkippedOutcome = Extract<DeliveryOutcome, { kind: 'skipped' }>;
export type FailedOutcome = Extract<DeliveryOutcome, { kind: 'retry' | 'dead-letter' }>;

/** A transport's side of settling, for its delivery handle `T` (a record, a message, …). */
export interface OutcomeSettlement<T> {
  readonly breaker: CircuitBreaker;
  readonly counters: DeliveryCounters;
  /** The delivery is done: acknowledge it, commit its position. */
  settle(target: T): void;
  /** Leave the delivery where it is, unchanged, to be delivered again after the breaker closes. */
  putBack(target: T): void;
  /** Carry a retry or a dead letter out (and count it once it was). */
  settleFailure(target: T, outcome: FailedOutcome): Promise<void>;
  /** Observability after a handled or duplicate delivery was settled and counted. */
  handled?(target: T, outcome: SettledOutcome): void;
  /** Observability after a skipped delivery was settled and counted. */
  skipped?(target: T, outcome: SkippedOutcome): void;
}

export async function settleOutcome<T>(
  outcome: DeliveryOutcome,
  target: T,
  settlement: OutcomeSettlement<T>,
): Promise<void> {
  switch (outcome.kind) {
    case 'handled':
    case 'duplicate':
      settlement.settle(target);
      settlement.breaker.succeeded();
      settlement.counters.settled(outcome);
      settlement.handled?.(target, outcome);
      return;
    case 'skipped':
      settlement.settle(target);
      settlement.counters.settled(outcome);
      settlement.skipped?.(target, outcome);
      return;
    case 'unavailable':
      // Infrastructure, not the message: it waits, attempt unchanged, and consumption pauses.
      settlement.putBack(target);
      settlement.breaker.trip(outcome.error);
      return;
    case 'retry':
    case 'dead-letter':
      await settlement.settleFailure(target, outcome);
  }
}
