/** Failures the outbox relay itself raises (as opposed to the publisher's own errors). */
import { EvgenError } from '../errors.js';

/**
 * The publisher did not settle within the relay's `publishTimeoutMs`. Retryable and counted as
 * unavailability (the row goes back to READY with the relay's outage backoff, attempts kept). The publish itself cannot be cancelled and may still reach the broker,
 * so a retry can duplicate it; the consumers' inbox absorbs that.
 */
export class OutboxPublishTimeoutError extends EvgenError {
  readonly retryable = true;
  readonly code = 'OutboxPublishTimeoutError';
  /** A publish that does not settle says the broker is slow or gone: the row keeps its attempts. */
  readonly unavailable = true;
  constructor(readonly timeoutMs: number) {
    super(`publish timed out after ${timeoutMs} ms`);
    this.name = 'OutboxPublishTimeoutError';
  }
}
