/**
 * Records SENT marks as publishes confirm, not only at the end of a batch, so one slow publish
 * does not hold back the others' marks. Marks that arrive while an UPDATE is in flight are
 * written together by the next one.
 */
export class SentFlusher {
  private pending: string[] = [];
  private flushing: Promise<void> | undefined;
  /** UPDATE failures: those rows stay PROCESSING and are published again after the lease (the inbox absorbs it). */
  readonly errors: unknown[] = [];

  constructor(private readonly write: (ids: readonly string[]) => Promise<void>) {}

  mark(id: string): void {
    this.pending.push(id);
  }

  /** Starts writing what is pending (if not already writing). */
  flush(): void {
    this.flushing ??= (async () => {
      while (this.pending.length > 0) {
        const ids = this.pending;
        this.pending = [];
        try {
          await this.write(ids);
        } catch (error) {
          this.errors.push(error);
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
  }

  /** Resolves once every mark so far is written (or failed). */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.flushing) {
      this.flush();
      await this.flushing;
    }
  }
}
