/**
 * The consumers' circuit breaker, shared by every transport. When a handler fails because a
 * dependency is unavailable (the database, or anything that throws UnavailableError), every
 * other message would fail the same way and burn its retry budget; instead the transport stops
 * taking deliveries (RabbitMQ cancels its consumer, Kafka pauses its partitions, the in-process
 * broker parks its queue: messages stay where they are), waits with backoff, optionally probes
 * the dependency, and consumes again. Only message-specific failures use up attempts.
 */
import { backoffDelay, type BackoffOptions } from '../backoff.js';
import { REAL_RUNNER_TIMERS, type RunnerTimers } from './runner-timers.js';

export interface CircuitBreakerOptions {
  /** Pause before consuming again, by consecutive trips (default 1 s doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  /**
   * Resolves when the dependency is back (e.g. `() => db.query('SELECT 1')`). Called before
   * consuming again; a rejection keeps the breaker open for the next (longer) pause. Without it
   * the next delivery is the probe.
   */
  readonly healthCheck?: () => Promise<unknown>;
}

interface BreakerCallbacks {
  /** Stop taking deliveries (cancel the consumer). */
  pause(error: unknown, delayMs: number): void;
  /** Take deliveries again. */
  resume(): Promise<void>;
}

/** The clock, jitter and timers the breaker uses (a runner's seams); the process's by default. */
export interface BreakerSeams {
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
  readonly timers?: RunnerTimers | undefined;
}

export class CircuitBreaker {
  private open = false;
  private streak = 0;
  private timer: unknown;
  private stopped = false;
  trips = 0;
  /** Epoch ms when the breaker last opened, while it is open (health reports it). */
  openedAt: number | undefined;
  /** The error that opened it, while it is open. */
  openedBy: unknown;

  constructor(
    private readonly options: CircuitBreakerOptions,
    private readonly callbacks: BreakerCallbacks,
    private readonly seams: BreakerSeams = {},
  ) {}

  get #timers(): RunnerTimers {
    return this.seams.timers ?? REAL_RUNNER_TIMERS;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** A handler succeeded: the next trip starts at the first pause again. */
  succeeded(): void {
    this.streak = 0;
  }

  /** A dependency is unavailable: pause now, try again after the backoff. */
  trip(error: unknown): void {
    if (this.open || this.stopped) return;
    this.open = true;
    this.openedAt ??= (this.seams.now ?? Date.now)();
    this.openedBy = error;
    this.trips++;
    this.streak++;
    const delayMs = backoffDelay(
      this.streak,
      this.options.backoff,
      { baseMs: 1_000, capMs: 30_000, jitter: 0.2 },
      this.seams.random,
    );
    this.callbacks.pause(error, delayMs);
    this.timer = this.#timers.setTimeout(() => void this.close(), delayMs);
  }

  private async close(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    try {
      await this.options.healthCheck?.();
    } catch (error) {
      this.open = false;
      this.trip(error);
      return;
    }
    this.open = false;
    this.openedAt = undefined;
    this.openedBy = undefined;
    await this.callbacks.resume();
  }

  /** A new run (after a stop): closed, at the first pause again; `trips` keep counting. */
  reset(): void {
    this.stop();
    this.stopped = false;
    this.open = false;
    this.openedAt = undefined;
    this.openedBy = undefined;
    this.streak = 0;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.#timers.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
