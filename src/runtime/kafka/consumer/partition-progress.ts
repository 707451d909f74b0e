/**
 * Which offset of a partition may be committed. Records are registered in the order they were
 * fetched and marked done when settled (handled and committed in the inbox, or forwarded to a
 * retry or dead-letter topic). The committable offset is the offset after the last record of the
 * contiguous done prefix: committing it can never skip a record that is not settled, whatever
 * order records finish in. Offsets are compared in fetch order, not by arithmetic, because a
 * partition's offsets have holes (transaction markers, compaction).
 */
export class PartitionProgress {
  /** Registered, not yet passed by the committable offset, in fetch order. */
  private readonly pending: { offset: bigint; done: boolean }[] = [];
  private committable: bigint | undefined;
  private lastReceived: bigint | undefined;

  /** Registers a fetched record; offsets must increase. */
  received(offset: bigint): void {
    if (this.lastReceived !== undefined && offset <= this.lastReceived) {
      throw new RangeError(
        `offset ${offset} received after ${this.lastReceived}: offsets must increase`,
      );
    }
    this.lastReceived = offset;
    this.pending.push({ offset, done: false });
  }

  /**
   * Marks a registered record settled. Returns the new committable offset when it moved
   * (offset of the last contiguous settled record + 1), otherwise undefined.
   */
  done(offset: bigint): bigint | undefined {
    const entry = this.pending.find((candidate) => candidate.offset === offset);
    if (entry === undefined) throw new RangeError(`offset ${offset} was never received`);
    entry.done = true;
    let moved: bigint | undefined;
    while (this.pending.length > 0 && this.pending[0]!.done) {
      moved = this.pending.shift()!.offset + 1n;
    }
    if (moved !== undefined) this.committable = moved;
    return moved;
  }

  /** The offset to commit (next record to read), or undefined when nothing was settled yet. */
  get committableOffset(): bigint | undefined {
    return this.committable;
  }

  /** Records received and not yet below the committable offset. */
  get outstanding(): number {
    return this.pending.length;
  }
}
