/**
 * What the delivery core calls per message. Generated inbox-guarded consumers fit it: `handle`
 * resolves once the inbox transaction committed (`'handled'` or `'duplicate'`) and rejects with an
 * error whose `retryable: boolean` says whether to retry; errors without it are classified by
 * `classifyError` (see failure.ts).
 */
import type { DeliveryContext } from './delivery.js';

export interface MessageHandler {
  /** Consumer name, recorded in dead letters. */
  readonly name: string;
  /**
   * Event types the consumer handles. When given, a delivery of any other type is skipped
   * (settled like a handled one, never retried or dead-lettered); when absent every type is handed over.
   */
  readonly subscribes?: readonly string[];
  handle(raw: unknown, context?: DeliveryContext): Promise<unknown>;
}
