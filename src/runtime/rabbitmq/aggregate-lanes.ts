/**
 * Per-aggregate lanes for a consumer: work for one key runs one after the other, in the order it
 * was queued; work for different keys (and work without a key) runs concurrently. Like a Kafka
 * partition per aggregate inside one consumer, so the consumer's own concurrency (prefetch > 1)
 * never hands version k+1 to the database before version k.
 */
export class AggregateLanes {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier work of `key` settled; at once when `key` is undefined. */
  run<T>(key: string | undefined, work: () => Promise<T>): Promise<T> {
    if (key === undefined) return work();
    const previous = this.tails.get(key);
    const next = previous === undefined ? work() : previous.then(work, work);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}

/** The lane key of an evgen envelope: aggregate type and id; undefined when it has none. */
export function aggregateKey(body: Record<string, unknown>): string | undefined {
  const { aggregateType, aggregateId } = body;
  if (typeof aggregateId !== 'string' || aggregateId === '') return undefined;
  return JSON.stringify([typeof aggregateType === 'string' ? aggregateType : '', aggregateId]);
}
