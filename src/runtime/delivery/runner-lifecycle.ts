/**
 * The one lifecycle of every runner (RabbitMQ, Kafka and in-process consumers, the outbox
 * relay):
 *
 *   new → starting → running → stopping → stopped   (stopped → starting again: restartable)
 *
 * - `start()` is idempotent: concurrent calls share one opening, a running runner resolves at
 *   once, so a transport never opens twice.
 * - `stop()` is idempotent and waits for a `start()` in progress: a stop during start signals
 *   the opening (its AbortSignal) and closes whatever it opened, and the runner ends `stopped`,
 *   never `running` behind the caller's back. A stop before any start only closes.
 * - A `start()` that fails closes what it opened and leaves the runner `stopped` (startable).
 * - A `start()` during `stopping` waits for that stop, then starts a new cycle.
 * The transport supplies `open` and `close`; the lifecycle alone decides when each runs.
 */

export type RunnerState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/** A state change, as runners report it through their `onEvent` hook. */
export interface LifecycleEvent {
  readonly type: 'lifecycle';
  readonly state: RunnerState;
  readonly previous: RunnerState;
}

interface LifecycleSteps {
  /**
   * Connects and starts taking work. `signal` aborts when `stop()` is called meanwhile: the
   * opening may return early (what it opened is closed by `close`).
   */
  open(signal: AbortSignal): Promise<void>;
  /** Stops taking work, drains it and closes everything `open` opened (also a partial opening). */
  close(): Promise<void>;
}

export class RunnerLifecycle {
  #state: RunnerState = 'new';
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  #abort: AbortController | undefined;

  constructor(
    private readonly steps: LifecycleSteps,
    private readonly onChange: (event: LifecycleEvent) => void = () => undefined,
  ) {}

  get state(): RunnerState {
    return this.#state;
  }

  /**
   * Aborts when a stop is asked for the current cycle (already aborted when no cycle runs):
   * what the source does in the background (reconnects, timers) ends with it.
   */
  get signal(): AbortSignal {
    return this.#abort?.signal ?? AbortSignal.abort();
  }

  start(): Promise<void> {
    switch (this.#state) {
      case 'running':
        return Promise.resolve();
      case 'starting':
        return this.#starting!;
      case 'stopping':
        return this.#stopping!.then(() => this.start());
      default:
        break;
    }
    const abort = new AbortController();
    this.#abort = abort;
    this.#set('starting');
    this.#starting = (async () => {
      try {
        await this.steps.open(abort.signal);
      } catch (error) {
        // A stop meanwhile closes (and ends the cycle) itself; otherwise close what was opened.
        if (!abort.signal.aborted) await this.#stopCycle(undefined).catch(() => undefined);
        throw error;
      }
      if (!abort.signal.aborted) this.#set('running');
    })().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  stop(): Promise<void> {
    if (this.#state === 'stopped') return Promise.resolve();
    if (this.#state === 'stopping') return this.#stopping!;
    return this.#stopCycle(this.#starting);
  }

  #stopCycle(starting: Promise<void> | undefined): Promise<void> {
    this.#abort?.abort();
    this.#set('stopping');
    this.#stopping = (async () => {
      try {
        // A failed start has nothing to wait for: close() below releases what it opened.
        await starting?.catch(() => undefined);
        await this.steps.close();
      } finally {
        this.#set('stopped');
        this.#stopping = undefined;
      }
    })();
    return this.#stopping;
  }

  #set(state: RunnerState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.onChange({ type: 'lifecycle', state, previous });
  }
}
