/** Failures of the RabbitMQ transport. Each says whether retrying can help (see ../errors.ts). */
import { EvgenError } from '../errors.js';

/**
 * The exchange accepted the message but no queue was bound for its routing key, so the broker
 * returned it (`mandatory`). amqplib still reports a successful confirm for it; evgen does not.
 * Retryable: binding the missing queue fixes it, and the relay keeps the row until then.
 */
export class UnroutableError extends EvgenError {
  readonly retryable = true;
  readonly code = 'UnroutableError';
  constructor(
    readonly messageId: string,
    readonly exchange: string,
    readonly routingKey: string,
    readonly replyCode: number,
    readonly replyText: string,
  ) {
    super(
      `message ${messageId} to exchange '${exchange}' with routing key '${routingKey}' was returned unroutable ` +
        `(${replyCode} ${replyText}): no queue is bound for it`,
    );
    this.name = 'UnroutableError';
  }
}

/** The broker refused the message (basic.nack), e.g. a queue at its length limit with reject-publish. */
export class PublishNackedError extends EvgenError {
  readonly retryable = true;
  readonly code = 'PublishNackedError';
  constructor(
    readonly messageId: string,
    readonly exchange: string,
    readonly routingKey: string,
  ) {
    super(
      `broker nacked message ${messageId} to exchange '${exchange}' with routing key '${routingKey}'`,
    );
    this.name = 'PublishNackedError';
  }
}

/**
 * The broker did not confirm the message within `confirmTimeoutMs` (e.g. a connection blocked by a
 * resource alarm, a lost confirm). Retryable; the message may still have been stored, so a retry
 * can duplicate it (the inbox absorbs that). A confirm that arrives later is ignored.
 */
export class PublishTimeoutError extends EvgenError {
  readonly retryable = true;
  readonly code = 'PublishTimeoutError';
  /** The broker is slow or unreachable, not the message: no attempt of the outbox row is used up. */
  readonly unavailable = true;
  constructor(
    readonly messageId: string,
    readonly exchange: string,
    readonly routingKey: string,
    readonly timeoutMs: number,
  ) {
    super(
      `broker did not confirm message ${messageId} to exchange '${exchange}' with routing key '${routingKey}' within ${timeoutMs} ms`,
    );
    this.name = 'PublishTimeoutError';
  }
}

/**
 * The exchange a message is routed to does not exist on the broker (asked before its first
 * publish: a publish to it would close the channel every other message is on). Retryable:
 * declaring it fixes it, and the relay keeps the row until then.
 */
export class RabbitExchangeMissingError extends EvgenError {
  readonly retryable = true;
  readonly code = 'RabbitExchangeMissingError';
  constructor(readonly exchange: string) {
    super(
      `exchange '${exchange}' does not exist on the broker: declare it (assertTopology with rabbitTopology from generated/rabbitmq/topology.ts); the row is retried with backoff, and other exchanges' messages are not held up`,
    );
    this.name = 'RabbitExchangeMissingError';
  }
}

/** The channel or connection closed before the broker confirmed: the message may or may not be stored. */
export class ChannelClosedError extends EvgenError {
  readonly retryable = true;
  readonly code = 'ChannelClosedError';
  /** The connection is gone, not the message's fault: no attempt of the outbox row is used up. */
  readonly unavailable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChannelClosedError';
  }
}

/**
 * An exchange or queue already exists with different properties (PRECONDITION_FAILED). Names
 * the object and the differing argument, with the server's own words.
 */
export class TopologyConflictError extends EvgenError {
  readonly retryable = false;
  readonly code = 'TopologyConflictError';
  constructor(readonly conflicts: readonly TopologyConflict[]) {
    super(
      conflicts
        .map(
          (c) =>
            `${c.kind} '${c.name}' already exists with a different '${c.argument}'` +
            `${c.detail ? ` (${c.detail})` : ''}; delete it or change the declaration — server said: ${c.serverMessage}`,
        )
        .join('\n'),
    );
    this.name = 'TopologyConflictError';
  }
}

export interface TopologyConflict {
  readonly kind: 'exchange' | 'queue';
  readonly name: string;
  /** The differing property, e.g. `x-message-ttl`, `durable`, `type`, or `unknown` if the server did not say. */
  readonly argument: string;
  /** `received '200' but current is '100'` when the server said so. */
  readonly detail?: string;
  readonly serverMessage: string;
}
