/**
 * The relay's in-flight window: at most `size` publishes awaiting their confirm, across every
 * batch the relay has going. Waiters are served in arrival order.
 */
export class PublishWindow {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves once a slot is free (at once when one is). */
  acquire(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Takes a slot if one is free now and no one is waiting; never waits. */
  tryAcquire(): boolean {
    if (this.used >= this.size || this.waiting.length > 0) return false;
    this.used++;
    return true;
  }

  /** Frees `slots` slots (default one), each handed to the longest waiter if there is one. */
  release(slots = 1): void {
    for (let slot = 0; slot < slots; slot++) {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.used--;
    }
  }
}
