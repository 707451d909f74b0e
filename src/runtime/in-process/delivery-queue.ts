/**
 * The in-process broker's queue: deliveries waiting for their (retry) delay, and deliveries
 * parked while the broker is stopped or its breaker is open. It is the broker's only state
 * besides the records; the work being handled is the runner core's in-flight work.
 */
import type { RunnerTimers } from '../delivery/runner-timers.js';

export class DeliveryQueue<T> {
  readonly #waiting = new Map<unknown, T>();
  #parked: T[] = [];

  /** `deliver` runs each delivery once its delay (on `timers`, the runner's seam) has passed. */
  constructor(
    private readonly deliver: (item: T) => void,
    private readonly timers: RunnerTimers,
  ) {}

  /** Deliveries waiting, for a delay or parked. */
  get size(): number {
    return this.#waiting.size + this.#parked.length;
  }

  schedule(item: T, delayMs: number): void {
    const timer = this.timers.setTimeout(() => {
      this.#waiting.delete(timer);
      this.deliver(item);
    }, delayMs);
    this.#waiting.set(timer, item);
  }

  /** Holds a delivery until `release()`. */
  park(item: T): void {
    this.#parked.push(item);
  }

  /** Every parked delivery goes again now, in the order parked. */
  release(): void {
    const parked = this.#parked;
    this.#parked = [];
    for (const item of parked) this.schedule(item, 0);
  }

  /** Stopping: what waits for a delay is parked instead, for the next `release()`. */
  hold(): void {
    for (const [timer, item] of this.#waiting) {
      this.timers.clearTimeout(timer);
      this.#parked.push(item);
    }
    this.#waiting.clear();
  }

  /** Drops everything waiting. */
  clear(): void {
    for (const timer of this.#waiting.keys()) this.timers.clearTimeout(timer);
    this.#waiting.clear();
    this.#parked = [];
  }
}
