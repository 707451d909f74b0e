/**
 * What the RabbitMQ consumer runner is configured with and reports: its options, events and
 * metrics (the settler reports through the same events, so they live apart from the runner).
 */
import type { ChannelModel } from 'amqplib';
import type { BackoffOptions } from '../backoff.js';
import type { MessageBodyLimits } from '../decode-message-body.js';
import type { CircuitBreakerOptions } from '../delivery/circuit-breaker.js';
import type { DeliveryEvent } from '../delivery/delivery-event.js';
import type { DeliveryCounts } from '../delivery/delivery-outcome.js';
import type { DeliveryRunner } from '../delivery/delivery-runner.js';
import type { FailureClassifier } from '../delivery/failure.js';
import type { MessageHandler } from '../delivery/message-handler.js';
import type { RestartingEvent } from '../delivery/supervisor.js';
import type { AmqpConnector } from './connector.js';
import type { ConsumerRoutes } from './topology.js';

/** The delivery core's events, plus the channel's restarts and gap waits. */
export type ConsumerRunnerEvent =
  | DeliveryEvent
  | { readonly type: 'consuming'; readonly queue: string }
  | RestartingEvent
  | {
      readonly type: 'gap-wait';
      readonly messageId: string;
      readonly waitedMs: number;
      readonly delayMs: number;
    };

export interface ConsumerRunnerOptions {
  /**
   * A reconnecting connector, an AMQP URL (the runner then owns a reconnecting connection), or
   * an open connection the caller owns (no reconnect once it is lost).
   */
  readonly connection: AmqpConnector | ChannelModel | string;
  /** The consumer's queues, from `resolveTopology(...).consumers[name]` / `assertTopology`. */
  readonly routes: ConsumerRoutes;
  /** Normally a generated inbox-guarded consumer (`createInventoryServiceConsumer(...)`). */
  readonly handler: MessageHandler;
  /**
   * Unacked deliveries at a time. Default 20. Deliveries of one aggregate (same aggregateType and
   * aggregateId) are handled one after the other in delivery order; different aggregates run
   * concurrently, up to this many.
   */
  readonly prefetch?: number;
  /**
   * How long a message that arrives ahead of a missing version of its aggregate (`ctx.inOrder`'s
   * gap) waits for it, in ms (default 60 000): it is parked on the first delay tier with its
   * attempt unchanged. After that, gaps count as failed attempts like any retryable error.
   */
  readonly gapWaitMs?: number;
  /**
   * When the handler fails because a dependency is unavailable (`isUnavailableError`: database
   * connection lost or refused, UnavailableError), the delivery is put back unchanged and the
   * runner stops consuming for a backoff, then resumes (after `healthCheck`, if given).
   */
  readonly circuitBreaker?: CircuitBreakerOptions;
  /** Backoff between attempts to rebuild a lost channel or connection. */
  readonly reconnectBackoff?: BackoffOptions;
  /**
   * Largest body (`maxBytes`, default 1 MiB) and deepest nesting (`maxDepth`, default 64) accepted;
   * a message beyond them goes to the dead queue before it is parsed.
   */
  readonly messageLimits?: MessageBodyLimits;
  /** Your say in what a handler's failure means, asked before evgen's own (see FailureClassifier). */
  readonly classify?: FailureClassifier;
  /** Observability hook; must not throw. */
  readonly onEvent?: (event: ConsumerRunnerEvent) => void;
}

/** Counts since the runner was created (retry and dead-letter counts, for metrics). */
export interface ConsumerRunnerMetrics extends DeliveryCounts {
  /** Retry copies or dead letters that were not confirmed (the delivery stays unacked and comes back). */
  readonly settleFailures: number;
  /** Channel or connection rebuilds started. */
  readonly restarts: number;
  /** Deliveries put back in the queue unchanged (dependency unavailable, breaker open). */
  readonly requeued: number;
  /** Times the circuit breaker stopped consumption. */
  readonly pauses: number;
  /** Messages parked ahead of a missing version (no attempt used). */
  readonly gapWaits: number;
}

/**
 * `start()` rejects if the first set-up fails (e.g. the queue does not exist); `stop()` waits for
 * in-flight handlers and their acks, then closes the channel.
 */
export type ConsumerRunner = DeliveryRunner<ConsumerRunnerMetrics>;
