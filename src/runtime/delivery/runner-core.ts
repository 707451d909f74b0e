/**
 * The transport-neutral runner core every consumer runner (RabbitMQ, Kafka, in-process) is built
 * on. It owns what used to be written once per transport:
 *   - the lifecycle (runner-lifecycle.ts): new → starting → running → stopping → stopped, start
 *     idempotent and awaited by stop, stop idempotent and bounded by `drainTimeoutMs`;
 *   - the work in flight and its draining on stop (in-flight.ts);
 *   - the circuit breaker (circuit-breaker.ts), the outcome counters, the transport's own
 *     counts and the events, and the runner's public face (`runner()`: state, in flight,
 *     health, metrics, start and stop);
 *   - supervision: reopening a lost connection with backoff (supervisor.ts).
 * A transport supplies only its source (open, pause, resume, quiesce, close) and carries each
 * outcome out with `settleOutcome` (outcome-settlement.ts) over its own settler.
 *
 * Stopping runs: abort the cycle (background reconnects and timers end), stop the breaker, the
 * source's `quiesce` (take no new deliveries), drain the work in flight (at most
 * `drainTimeoutMs`), the source's `close` (commit, close connections).
 */
import type { BackoffOptions, BackoffSettings } from '../backoff.js';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import type { DeliveryEventOf } from './delivery-event.js';
import { DeliveryCounters, type DeliveryCounts } from './delivery-outcome.js';
import type { DeliveryRunner } from './delivery-runner.js';
import { InFlightWork } from './in-flight.js';
import {
  assessHealth,
  isoSince,
  withinMs,
  type HealthFacts,
  type RunnerHealth,
} from './runner-health.js';
import { RunnerLifecycle, type LifecycleEvent, type RunnerState } from './runner-lifecycle.js';
import { safeObserver } from './safe-observer.js';
import type { RunnerTimers } from './runner-timers.js';
import { Supervisor, type RestartingEvent } from './supervisor.js';

/** The transport's side of a runner: where deliveries come from. */
interface DeliverySource {
  /** Connects and starts taking deliveries; `signal` aborts when a stop comes meanwhile. */
  open(signal: AbortSignal): Promise<void>;
  /** The breaker opened: take no deliveries (they stay where they are) for `delayMs`. */
  pause(error: unknown, delayMs: number): void;
  /** The breaker closed: take deliveries again. Resolves false when there was nothing to resume. */
  resume(): Promise<boolean | undefined>;
  /** Stopping: take no new deliveries (cancel the consumer, clear timers). Before draining. */
  quiesce(): Promise<void>;
  /** Stopping, after draining: commit what was settled, close what `open` opened. */
  close(): Promise<void>;
  /** The transport's own health facts (Kafka: partitions assigned, lag); bounded by the core. */
  healthFacts?(): Promise<Partial<HealthFacts>>;
}

/** What the core itself reports through a runner's `onEvent`. */
export type RunnerCoreEvent =
  LifecycleEvent | RestartingEvent | DeliveryEventOf<'paused' | 'resumed' | 'error'>;

interface RunnerCoreOptions<E, C extends TransportCounts = TransportCounts> {
  /** The transport's own counts, all 0 (RabbitMQ's `requeued`, Kafka's `commitFailures`, …). */
  readonly counts?: C | undefined;
  readonly circuitBreaker?: CircuitBreakerOptions | undefined;
  /** Backoff of supervised reopening, and its defaults. */
  readonly reconnectBackoff?: BackoffOptions | undefined;
  readonly reconnectDefaults?: BackoffSettings;
  /** How long a stop waits for the work in flight before it closes anyway (default: no bound). */
  readonly drainTimeoutMs?: number | undefined;
  /** The runner's hook; its event type `E` includes the core's own (`RunnerCoreEvent`). */
  readonly onEvent?: ((event: E) => void) | undefined;
  /** Clock, jitter and timers of the breaker and the reconnects (DeliveryRunnerOptions' seams). */
  readonly now?: (() => number) | undefined;
  readonly random?: (() => number) | undefined;
  readonly timers?: RunnerTimers | undefined;
}

/** Counts a transport keeps beside the delivery counters; reported by `metrics()`. */
type TransportCounts = Record<string, number>;

/** What every runner's `metrics()` reports: outcomes, the transport's counts, breaker pauses. */
type CoreMetrics<C extends TransportCounts> = DeliveryCounts & C & { readonly pauses: number };

const NO_RECONNECT: BackoffSettings = { baseMs: 1_000, capMs: 30_000, jitter: 0.2 };

export class RunnerCore<
  E extends { readonly type: string },
  C extends TransportCounts = TransportCounts,
> {
  readonly counters = new DeliveryCounters();
  /** The transport's own counts (mutable: the transport increments them). */
  readonly counts: { -readonly [K in keyof C]: C[K] };
  readonly inFlight = new InFlightWork();
  readonly breaker: CircuitBreaker;
  readonly supervisor: Supervisor;
  readonly emit: (event: E | RunnerCoreEvent) => void;
  readonly #lifecycle: RunnerLifecycle;

  constructor(
    private readonly source: DeliverySource,
    private readonly options: RunnerCoreOptions<E, C> = {},
  ) {
    this.counts = { ...(options.counts ?? ({} as C)) };
    const emit = safeObserver(options.onEvent) as (event: E | RunnerCoreEvent) => void;
    this.emit = emit;
    const seams = { now: options.now, random: options.random, timers: options.timers };
    this.breaker = new CircuitBreaker(
      options.circuitBreaker ?? {},
      {
        pause: (error, delayMs) => {
          emit({ type: 'paused', delayMs, error });
          source.pause(error, delayMs);
        },
        resume: async () => {
          if (this.state !== 'running') return;
          try {
            if ((await source.resume()) ?? true) emit({ type: 'resumed' });
          } catch (error) {
            emit({ type: 'error', error });
          }
        },
      },
      seams,
    );
    this.supervisor = new Supervisor(
      options.reconnectBackoff,
      options.reconnectDefaults ?? NO_RECONNECT,
      emit,
      seams,
    );
    this.#lifecycle = new RunnerLifecycle(
      {
        open: async (signal) => {
          this.breaker.reset();
          await source.open(signal);
        },
        close: () => this.#close(),
      },
      emit,
    );
  }

  get state(): RunnerState {
    return this.#lifecycle.state;
  }

  /** Aborts when a stop is asked for (background work of the source ends with it). */
  get signal(): AbortSignal {
    return this.#lifecycle.signal;
  }

  start(): Promise<void> {
    return this.#lifecycle.start();
  }

  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }

  /**
   * The runner's health (runner-health.ts): not ready while not running, while the breaker is
   * open (a dependency is away) or while the connection is lost and being reopened. The
   * transport's own facts are waited for at most `factsTimeoutMs` (default 2 s).
   */
  async health(name?: string, factsTimeoutMs = 2_000): Promise<RunnerHealth> {
    const own = this.source.healthFacts?.();
    const extra = own === undefined ? {} : await withinMs(own, factsTimeoutMs, {});
    const { breaker, supervisor } = this;
    const error = breaker.openedBy;
    const health = assessHealth({
      ...extra,
      state: this.state,
      inFlight: this.inFlight.size,
      breakerOpen: breaker.isOpen,
      ...(breaker.isOpen
        ? {
            breakerOpenSince: isoSince(breaker.openedAt),
            breakerReason: error instanceof Error ? error.message : String(error),
          }
        : {}),
      ...(supervisor.lostSince !== undefined && this.state === 'running'
        ? { brokerDisconnectedSince: isoSince(supervisor.lostSince) }
        : {}),
    });
    return name === undefined ? health : { name, ...health };
  }

  /** The delivery counters, the transport's counts and the breaker's pauses, as of now. */
  metrics(): CoreMetrics<C> {
    return { ...this.counters.snapshot(), ...this.counts, pauses: this.breaker.trips };
  }

  /**
   * The runner a transport hands out: this core's lifecycle, in-flight count, health (named
   * `name`) and `metrics`, plus the transport's own members (`own`, e.g. Kafka's `lag`), whose
   * getters stay getters.
   */
  runner<R extends DeliveryRunner<DeliveryCounts>>(
    name: string,
    metrics: R['metrics'],
    own: Omit<R, keyof DeliveryRunner<DeliveryCounts>>,
  ): R {
    const face = {
      metrics,
      health: () => this.health(name),
      start: () => this.start(),
      stop: () => this.stop(),
    };
    return Object.defineProperties(face, {
      state: { get: () => this.state, enumerable: true },
      inFlight: { get: () => this.inFlight.size, enumerable: true },
      ...Object.getOwnPropertyDescriptors(own),
    }) as unknown as R;
  }

  /** Runs a delivery's work as in flight: a stop drains it; a rejection is reported. */
  track(work: Promise<void>): Promise<void> {
    return this.inFlight.track(work.catch((error: unknown) => this.emit({ type: 'error', error })));
  }

  /** Reopens the source with backoff after it lost its connection, until it is back or stopped. */
  restart(error: unknown, reopen: () => Promise<void>): void {
    this.supervisor.restart(error, reopen, this.signal);
  }

  async #close(): Promise<void> {
    this.breaker.stop();
    await this.supervisor.settled();
    await this.source.quiesce();
    await this.inFlight.drain(this.options.drainTimeoutMs);
    await this.source.close();
  }
}
