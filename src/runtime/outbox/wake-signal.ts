/**
 * The relay loop's idle wait: a NOTIFY (or stop) ends it early. A NOTIFY that arrives while no
 * lane of the loop is waiting is remembered, so the next wait returns at once. Several lanes may
 * wait at once; a NOTIFY ends every wait.
 */
interface Waiter {
  readonly ignoreWake: boolean;
  readonly done: (woken: boolean) => void;
}

export class WakeSignal {
  private pending = false;
  private readonly waiters = new Set<Waiter>();

  /** @param isStopping whether stop() was called; a stopping relay never waits. */
  constructor(private readonly isStopping: () => boolean) {}

  /**
   * Waits `ms`; a NOTIFY (or stop) ends the wait early unless `ignoreWake`. Resolves `false` when
   * the full wait ran out, `true` when something ended it early (the adaptive idle poll starts
   * again at its floor after a wake-up).
   */
  sleep(ms: number, ignoreWake = false): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.isStopping() || (!ignoreWake && this.pending)) {
        if (!ignoreWake) this.pending = false;
        resolve(true);
        return;
      }
      const waiter: Waiter = {
        ignoreWake,
        done: (woken) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          if (!ignoreWake) this.pending = false;
          resolve(woken);
        },
      };
      const timer = setTimeout(() => waiter.done(false), ms);
      this.waiters.add(waiter);
    });
  }

  /** A NOTIFY arrived: ends the current waits, or the next one at once. */
  notify(): void {
    // Remembered for a lane that is busy now, and for a wait during an outage once it ends.
    if (!this.wakeWaiting()) this.pending = true;
  }

  /**
   * Ends the waits that a NOTIFY would end, without remembering anything for later waits;
   * returns whether there was one.
   */
  wakeWaiting(): boolean {
    let woken = false;
    for (const waiter of [...this.waiters]) {
      if (waiter.ignoreWake) continue;
      waiter.done(true);
      woken = true;
    }
    return woken;
  }

  /** The broker outage ended early (a publish was confirmed): ends the waits that ignore NOTIFYs. */
  outageEnded(): void {
    for (const waiter of [...this.waiters]) if (waiter.ignoreWake) waiter.done(true);
  }

  /** stop() was called: ends every wait (a stopping relay's next wait returns at once). */
  interrupt(): void {
    for (const waiter of [...this.waiters]) waiter.done(true);
  }
}
