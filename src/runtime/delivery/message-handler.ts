/**
 * What the delivery core calls per message. Generated inbox-guarded consumers fit it: `handle`
 * resolves once the inbox transaction committed (`'handled'` or `'duplicate'`) and rejects with an
 * error whose `retryable: boolean` says whether to retry; errors without it are classified by
 * `classifyError` (see failure.ts).
 */
import type { AggregateHint, DeliveryContext } from './delivery.js';

export interface MessageHandler {
  /** Consumer name, recorded in dead letters. */
  readonly name: string;
  /**
   * Event types the consumer handles. When given, a delivery of any other type is skipped
   * (settled like a handled one, never retried or dead-lettered); when absent every type is handed over.
   */
  readonly subscribes?: readonly string[];
  handle(raw: unknown, context?: DeliveryContext): Promise<unknown>;
  /**
   * Called for a delivery the consumer skips (type not subscribed), before it is settled: an
   * inbox consumer records the aggregate's version so `ctx.inOrder` sees no gap where the
   * skipped event was. A rejection is a failure of the delivery like a handler's.
   */
  skip?(skipped: SkippedDelivery, context: DeliveryContext): Promise<void>;
}

/** What is known about a skipped delivery: its headers, or its body when they lack it. */
export interface SkippedDelivery {
  readonly messageId: string | undefined;
  readonly eventType: string;
  readonly aggregate: AggregateHint | undefined;
}
