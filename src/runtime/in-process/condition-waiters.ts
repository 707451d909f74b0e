/**
 * Promises that resolve once a condition holds, checked whenever the owner says something
 * changed (`notify`): the in-process broker's `settled()` and `waitFor()`.
 */
interface Waiter {
  readonly ready: () => boolean;
  readonly resolve: () => void;
}

export class ConditionWaiters {
  #waiters: Waiter[] = [];

  /** Resolves once `ready()` holds; rejects with `timeoutMessage` after `timeoutMs`. */
  waitFor(ready: () => boolean, timeoutMs: number, timeoutMessage: string): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter !== entry);
        reject(new Error(timeoutMessage));
      }, timeoutMs);
      const entry: Waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.#waiters.push(entry);
    });
  }

  /** Resolves every waiter whose condition now holds. */
  notify(): void {
    const ready = this.#waiters.filter((waiter) => waiter.ready());
    if (ready.length === 0) return;
    this.#waiters = this.#waiters.filter((waiter) => !ready.includes(waiter));
    for (const waiter of ready) waiter.resolve();
  }
}
