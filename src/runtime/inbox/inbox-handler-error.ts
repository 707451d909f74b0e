/**
 * The one error the inbox guard rethrows. It keeps the original failure as `cause` and says
 * whether a retry can help, so a transport routes on `retryable` alone (retry tier or dead letter).
 */
import { classifyError, describeError, EvgenError } from '../errors.js';

export class InboxHandlerError extends EvgenError {
  readonly code = 'InboxHandlerError';
  readonly retryable: boolean;

  constructor(
    readonly consumer: string,
    readonly messageId: string,
    override readonly cause: unknown,
  ) {
    const described = describeError(cause);
    super(
      `consumer ${consumer} failed on message ${messageId}: ${described.type}: ${described.message}`,
      { cause },
    );
    this.name = 'InboxHandlerError';
    this.retryable = classifyError(cause) === 'retryable';
  }

  /** `type` of the original error (e.g. `ValidationError`, `error` for a SQLSTATE), for dead letters. */
  get causeType(): string {
    return describeError(this.cause).type;
  }
}
