/** The lifecycle every transport's consumer runner offers (each adds its own queries). */
import type { DeliveryCounts } from './delivery-outcome.js';
import type { RunnerHealth } from './runner-health.js';
import type { RunnerState } from './runner-lifecycle.js';

export interface DeliveryRunner<Metrics extends DeliveryCounts> {
  /**
   * Connects and starts consuming; rejects if the first set-up fails. Idempotent: concurrent
   * calls share one start; a stopped runner starts again.
   */
  start(): Promise<void>;
  /**
   * Stops taking deliveries and waits for the ones being handled (and their settling), then
   * closes. Idempotent; waits for a start in progress, which then ends stopped.
   */
  stop(): Promise<void>;
  /** Where the runner is in its lifecycle (for health and readiness checks). */
  readonly state: RunnerState;
  /**
   * Readiness and liveness as data, with the facts behind them (breaker open and why, broker
   * lost since, Kafka partitions and lag); named after the consumer. See `createHealthEndpoints`.
   */
  health(): Promise<RunnerHealth>;
  /** Deliveries being handled now. */
  readonly inFlight: number;
  /** Counts since the runner was created, in the delivery core's vocabulary plus the transport's. */
  metrics(): Metrics;
}
