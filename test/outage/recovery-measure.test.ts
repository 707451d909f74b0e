/**
 * The outage suite's recovery measure (pure): every aggregate that still had events to apply when
 * the fault ended must move again; one surviving aggregate's effects do not count as recovery.
 */
import { describe, expect, it } from 'vitest';
import { everyAggregateRecovered } from './support/outage-run.js';

const sample = (at: number, counts: Record<string, number>) => ({
  at,
  counts: new Map(Object.entries(counts)),
});

describe('everyAggregateRecovered', () => {
  it('is the slowest aggregate’s first effect after the fault, not the first effect of any', () => {
    const progress = [
      sample(900, { a: 1, b: 1 }),
      // a keeps flowing right after the fault (a surviving relay), b is stuck for 4 s.
      sample(1_100, { a: 2, b: 1 }),
      sample(3_000, { a: 3, b: 1 }),
      sample(5_000, { a: 3, b: 2 }),
    ];
    expect(everyAggregateRecovered(progress, 1_000)).toBe(4_000);
  });

  it('ignores aggregates complete before the fault ended, and is 0 when none had work left', () => {
    const progress = [sample(900, { a: 5, b: 2 }), sample(1_500, { a: 5, b: 3 })];
    expect(everyAggregateRecovered(progress, 1_000)).toBe(500);
    expect(everyAggregateRecovered([sample(900, { a: 5 }), sample(2_000, { a: 5 })], 1_000)).toBe(
      0,
    );
  });

  it('counts an aggregate whose first effect comes only after the fault', () => {
    const progress = [
      sample(900, { a: 1 }),
      sample(1_200, { a: 1, c: 1 }),
      sample(2_600, { a: 2, c: 1 }),
    ];
    expect(everyAggregateRecovered(progress, 1_000)).toBe(1_600);
  });
});
