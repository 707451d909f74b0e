/**
 * SENT marks the relay could not write yet: rows whose publish was confirmed while the database
 * was unreachable (or the UPDATE lost a lock wait or a deadlock). Dropping them left the rows
 * PROCESSING until their lease ran out and then published them a second time, and held every
 * later row of their aggregates back that long; kept here, they are written by the relay's next
 * round trip that works, before its next claim.
 *
 * Only confirmed rows ever get here, each with the lease token of the claim that published it:
 * the UPDATE marks a row only while that claim still holds it, so a row another relay has taken
 * over meanwhile (it will publish it again) is left alone.
 */
export interface SentMarks {
  readonly ids: readonly string[];
  readonly token: string;
}

export class UnwrittenMarks {
  private marks: SentMarks[] = [];
  private writing: Promise<void> | undefined;

  add(marks: SentMarks): void {
    if (marks.ids.length > 0) this.marks.push(marks);
  }

  /** Rows waiting for their mark. */
  get size(): number {
    return this.marks.reduce((sum, marks) => sum + marks.ids.length, 0);
  }

  /**
   * Writes every mark kept so far, one UPDATE per claim. A write in progress (the other lane's)
   * is waited for first: a claim must not run before the marks it holds are written, or a row
   * whose lease ran out during the outage would be claimed and published again. A failed write
   * puts back what it took and throws (the database is still unreachable: the caller's claim
   * would fail as well).
   */
  async write(sent: (ids: readonly string[], token: string) => Promise<void>): Promise<void> {
    while (this.writing !== undefined) await this.writing.catch(() => undefined);
    if (this.marks.length === 0) return;
    const writing = this.writeTaken(sent);
    this.writing = writing;
    try {
      await writing;
    } finally {
      this.writing = undefined;
    }
  }

  private async writeTaken(
    sent: (ids: readonly string[], token: string) => Promise<void>,
  ): Promise<void> {
    const taken = this.marks;
    this.marks = [];
    for (let index = 0; index < taken.length; index++) {
      try {
        await sent(taken[index]!.ids, taken[index]!.token);
      } catch (error) {
        this.marks.push(...taken.slice(index));
        throw error;
      }
    }
  }
}
