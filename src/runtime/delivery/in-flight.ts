/**
 * The work a runner has in flight (deliveries being handled and settled, batches being
 * published), so that a stop can drain it: wait until none is left, including work that started
 * while waiting, or give up after a bound and let the caller abandon what is left.
 */
export class InFlightWork {
  readonly #work = new Set<Promise<unknown>>();

  get size(): number {
    return this.#work.size;
  }

  /** Tracks `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#work.add(work);
    const untrack = () => this.#work.delete(work);
    work.then(untrack, untrack);
    return work;
  }

  /**
   * Resolves once nothing is in flight; with `timeoutMs`, resolves `false` if work is still in
   * flight after it (`true` when drained).
   */
  async drain(timeoutMs?: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut =
      timeoutMs === undefined
        ? undefined
        : new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      while (this.#work.size > 0) {
        const settled = Promise.allSettled([...this.#work]).then(() => true);
        if (!(await (timedOut ? Promise.race([settled, timedOut]) : settled))) return false;
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}
