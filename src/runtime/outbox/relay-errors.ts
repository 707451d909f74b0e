/** Failures the outbox relay itself raises (as opposed to the publisher's own errors). */
import { EvgenError } from '../errors.js';

/**
 * The publisher did not settle within the relay's `publishTimeoutMs`. Retryable: the row goes back
 * to READY with backoff. The publish itself cannot be cancelled and may still reach the broker,
 * so a retry can duplicate it; the consumers' inbox absorbs that.
 */
export class OutboxPublishTimeoutError extends EvgenError {
  readonly retryable = true;
  readonly code = 'OutboxPublishTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`publish timed out after ${timeoutMs} ms`);
    this.name = 'OutboxPublishTimeoutError';
  }
}
