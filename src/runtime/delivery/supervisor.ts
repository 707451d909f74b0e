/**
 * Supervision: a runner whose connection (channel, session) was lost opens it again with
 * backoff until it is back or the runner stops. The backoff keeps growing across restarts until
 * the source reports it works again (`healthy()`), so a cause that survives a restart (say a
 * deleted exchange) backs off further each time instead of looping at the first delay.
 */
import { backoffDelay, type BackoffOptions, type BackoffSettings } from '../backoff.js';
import { sleep } from '../sleep.js';
import type { BreakerSeams } from './circuit-breaker.js';

/** A restart being attempted after `delayMs`, reported through the runner's `onEvent`. */
export interface RestartingEvent {
  readonly type: 'restarting';
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

export class Supervisor {
  #streak = 0;
  #restarting: Promise<void> | undefined;
  /** Restarts begun since the runner was created. */
  restarts = 0;
  /** Epoch ms since which the connection has been lost (a restart is in progress); health reports it. */
  lostSince: number | undefined;

  constructor(
    private readonly backoff: BackoffOptions | undefined,
    private readonly defaults: BackoffSettings,
    private readonly report: (event: RestartingEvent) => void,
    /** Clock, jitter and timers (a runner's seams), as the breaker takes them. */
    private readonly seams: BreakerSeams = {},
  ) {}

  /** The source works (a delivery was settled): the next restart starts at the first delay. */
  healthy(): void {
    this.#streak = 0;
  }

  /** Whether a restart is in progress. */
  get restarting(): boolean {
    return this.#restarting !== undefined;
  }

  /**
   * Opens again (after a backoff) until `reopen` resolves or `signal` aborts; a restart already
   * in progress is not doubled.
   */
  restart(error: unknown, reopen: () => Promise<void>, signal: AbortSignal): void {
    if (signal.aborted || this.#restarting !== undefined) return;
    this.#streak++;
    this.restarts++;
    this.lostSince ??= (this.seams.now ?? Date.now)();
    const first = this.#streak;
    this.#restarting = (async () => {
      for (let attempt = first; !signal.aborted; attempt++) {
        const delayMs = backoffDelay(attempt, this.backoff, this.defaults, this.seams.random);
        this.report({ type: 'restarting', attempt, delayMs, error });
        await sleep(delayMs, signal, this.seams.timers);
        if (signal.aborted) return;
        try {
          await reopen();
          this.lostSince = undefined;
          return;
        } catch (openError) {
          error = openError;
        }
      }
    })().finally(() => {
      this.#restarting = undefined;
      // Stopped while reconnecting: nothing is lost any more, the runner is simply stopped.
      if (signal.aborted) this.lostSince = undefined;
    });
  }

  /** Resolves once no restart is in progress (a stop aborts its sleep first). */
  async settled(): Promise<void> {
    await this.#restarting;
  }
}
