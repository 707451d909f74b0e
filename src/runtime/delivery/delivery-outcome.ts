/**
 * What the delivery core decided about one delivery; the transport only carries it out:
 *   handled | duplicate | skipped → settle (ack / commit) like a success;
 *   retry                         → a later attempt (retry tier, retry topic, timer);
 *   dead-letter                   → the transport's dead-letter destination, with the facts;
 *   unavailable                   → a dependency is down: put the delivery back unchanged and
 *                                   pause consumption; no attempt is used.
 */
import type { DeadLetterFacts, FailureFacts } from './failure.js';
import type { GapWaitDecision } from './gap-wait.js';

/**
 * Why a delivery was skipped: its event type is not one the consumer subscribes to (a type its
 * catalog does not know at all is not subscribed either).
 */
type SkipReason = 'unsubscribed';

export type DeliveryOutcome =
  | {
      readonly kind: 'handled' | 'duplicate';
      readonly messageId: string;
      readonly eventType: string;
      /** What the handler resolved with. */
      readonly result: unknown;
      readonly body: Record<string, unknown>;
    }
  | {
      readonly kind: 'skipped';
      readonly messageId: string | undefined;
      readonly eventType: string;
      readonly reason: SkipReason;
    }
  | {
      readonly kind: 'retry';
      readonly messageId: string;
      /** The attempt that failed; the next one is attempt + 1 (the same one when parked). */
      readonly attempt: number;
      readonly error: unknown;
      readonly failure: FailureFacts;
      /**
       * `ctx.inOrder` found a gap and it may still wait (gap-wait.ts): park the message, attempt
       * unchanged, carrying the clock. Only for a transport that asked for gap waits.
       */
      readonly park?: Extract<GapWaitDecision, { park: true }> | undefined;
      readonly body: Record<string, unknown>;
      /** The dead letter to send instead when the transport cannot schedule the retry. */
      readonly letter: DeadLetterFacts;
    }
  | {
      readonly kind: 'dead-letter';
      readonly messageId: string | undefined;
      readonly error: unknown;
      readonly letter: DeadLetterFacts;
      /** Undefined when the body could not be parsed. */
      readonly body: Record<string, unknown> | undefined;
    }
  | { readonly kind: 'unavailable'; readonly messageId: string; readonly error: unknown };

/** Counts every runner reports (`metrics()`), in one vocabulary. */
export interface DeliveryCounts {
  /** Deliveries whose handler resolved and that were settled, duplicates included. */
  readonly handled: number;
  /** Of those, the ones the inbox had already (`'duplicate'`). */
  readonly duplicates: number;
  /** Deliveries of types the consumer does not subscribe to or know, settled without a handler. */
  readonly skipped: number;
  /** Retries scheduled (a retry copy confirmed, a timer set). */
  readonly retried: number;
  /** Dead letters confirmed. */
  readonly deadLettered: number;
}

/** Mutable counters behind `DeliveryCounts`; `settled` counts an outcome once it was carried out. */
export class DeliveryCounters implements DeliveryCounts {
  handled = 0;
  duplicates = 0;
  skipped = 0;
  retried = 0;
  deadLettered = 0;

  settled(outcome: DeliveryOutcome): void {
    switch (outcome.kind) {
      case 'duplicate':
        this.duplicates++;
        this.handled++;
        break;
      case 'handled':
        this.handled++;
        break;
      case 'skipped':
        this.skipped++;
        break;
      case 'retry':
        this.retried++;
        break;
      case 'dead-letter':
        this.deadLettered++;
        break;
      case 'unavailable':
        break;
    }
  }

  snapshot(): DeliveryCounts {
    return {
      handled: this.handled,
      duplicates: this.duplicates,
      skipped: this.skipped,
      retried: this.retried,
      deadLettered: this.deadLettered,
    };
  }
}
