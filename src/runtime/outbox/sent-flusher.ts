/**
 * Records SENT marks: once per batch, when its last publish has settled (one UPDATE for the
 * whole batch on the path to the next claim, not one per wave of confirms), and meanwhile every
 * `delayMs` while the batch still runs, so one slow publish does not hold back the others' marks
 * for long. Marks that arrive while an UPDATE is in flight are written together by the next one.
 */
export class SentFlusher {
  private pending: string[] = [];
  private flushing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** UPDATE failures; their rows are in `unwritten`, for the relay to write later. */
  readonly errors: unknown[] = [];
  /** Rows whose UPDATE failed: confirmed, not marked yet. */
  readonly unwritten: string[] = [];

  constructor(
    private readonly write: (ids: readonly string[]) => Promise<void>,
    private readonly delayMs: number,
  ) {}

  mark(id: string): void {
    this.pending.push(id);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, this.delayMs);
      // A timer must not keep the process alive; drain() writes what is left.
      this.timer.unref?.();
    }
  }

  /** Starts writing what is pending (if not already writing). */
  private flush(): void {
    this.flushing ??= (async () => {
      while (this.pending.length > 0) {
        const ids = this.pending;
        this.pending = [];
        try {
          await this.write(ids);
        } catch (error) {
          this.errors.push(error);
          this.unwritten.push(...ids);
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
  }

  /**
   * Hands the marks not written yet to the caller (to be written by the lane's next claim):
   * waits for an UPDATE in flight, then returns what is pending and stops the timer.
   */
  async takePending(): Promise<string[]> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    const ids = this.pending;
    this.pending = [];
    return ids;
  }

  /** Writes every mark so far; resolves once they are written (or failed: see `unwritten`). */
  async drain(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.pending.length > 0 || this.flushing) {
      this.flush();
      await this.flushing;
    }
  }
}
