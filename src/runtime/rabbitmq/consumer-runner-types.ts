/**
 * What the RabbitMQ consumer runner reports: its events and metrics (the settler reports through
 * the same events, so they live apart from the runner). Its options: consumer-runner-options.ts.
 */
import type { DeliveryEvent } from '../delivery/delivery-event.js';
import type { DeliveryCounts } from '../delivery/delivery-outcome.js';
import type { DeliveryRunner } from '../delivery/delivery-runner.js';
import type { RestartingEvent } from '../delivery/supervisor.js';

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
  /**
   * Deliveries the broker flagged `redelivered`: handed out before and not acked (put back by a
   * nack with requeue, or unacked on a channel or connection that closed). evgen's retry copies
   * are new messages and are not counted here.
   */
  readonly redelivered: number;
}

/**
 * `start()` rejects if the first set-up fails (e.g. the queue does not exist); `stop()` waits for
 * in-flight handlers and their acks, then closes the channel.
 */
export type ConsumerRunner = DeliveryRunner<ConsumerRunnerMetrics>;
