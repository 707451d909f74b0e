/** The lifecycle every transport's consumer runner offers (each adds its own queries). */
import type { DeliveryCounts } from './delivery-outcome.js';

export interface DeliveryRunner<Metrics extends DeliveryCounts> {
  /** Connects and starts consuming; rejects if the first set-up fails. */
  start(): Promise<void>;
  /** Stops taking deliveries and waits for the ones being handled (and their settling). */
  stop(): Promise<void>;
  /** Deliveries being handled now. */
  readonly inFlight: number;
  /** Counts since the runner was created, in the delivery core's vocabulary plus the transport's. */
  metrics(): Metrics;
}
