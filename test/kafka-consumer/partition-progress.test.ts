import { describe, expect, it } from 'vitest';
import { PartitionProgress } from '../../src/runtime/kafka/consumer/partition-progress.js';

describe('PartitionProgress', () => {
  it('commits the offset after the last contiguous settled record, whatever order records finish in', () => {
    const progress = new PartitionProgress();
    for (const offset of [5n, 6n, 7n, 8n]) progress.received(offset);
    expect(progress.committableOffset).toBeUndefined();
    expect(progress.done(7n)).toBeUndefined(); // 5 and 6 still open: nothing may be committed
    expect(progress.done(6n)).toBeUndefined();
    expect(progress.done(5n)).toBe(8n); // 5, 6, 7 settled → next to read is 8
    expect(progress.committableOffset).toBe(8n);
    expect(progress.outstanding).toBe(1);
    expect(progress.done(8n)).toBe(9n);
    expect(progress.outstanding).toBe(0);
  });

  it('follows fetch order across holes in the offsets (transaction markers, compaction)', () => {
    const progress = new PartitionProgress();
    progress.received(10n);
    progress.received(14n);
    expect(progress.done(14n)).toBeUndefined();
    expect(progress.done(10n)).toBe(15n);
  });

  it('refuses offsets that go backwards and records it never received', () => {
    const progress = new PartitionProgress();
    progress.received(3n);
    expect(() => progress.received(3n)).toThrow(/must increase/);
    expect(() => progress.received(2n)).toThrow(/must increase/);
    expect(() => progress.done(4n)).toThrow(/never received/);
  });
});
