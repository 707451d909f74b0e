/**
 * The relay loop's idle wait: a NOTIFY (or stop) ends it early. A NOTIFY that arrives while the
 * loop is busy is remembered, so the next wait returns at once.
 */
export class WakeSignal {
  private pending = false;
  private wake: (() => void) | undefined;

  /** @param isStopping whether stop() was called; a stopping relay never waits. */
  constructor(private readonly isStopping: () => boolean) {}

  /** Waits `ms`; a NOTIFY (or stop) ends the wait early unless `ignoreWake`. */
  sleep(ms: number, ignoreWake = false): Promise<void> {
    return new Promise((resolve) => {
      if (this.isStopping() || (!ignoreWake && this.pending)) {
        if (!ignoreWake) this.pending = false;
        resolve();
        return;
      }
      // Called only after `timer` is set: by the timer itself or by a later wake.
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        if (!ignoreWake) this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = ignoreWake ? () => (this.isStopping() ? done() : (this.pending = true)) : done;
    });
  }

  /** A NOTIFY arrived: ends the current wait, or the next one at once. */
  notify(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  /** stop() was called: ends the current wait (a stopping relay's next wait returns at once). */
  interrupt(): void {
    this.wake?.();
  }
}
