/** One benchmark measurement, compared with a raw baseline measured in the same run. */
export interface BenchResult {
  /** What is measured, e.g. `outbox write (pg)`. */
  readonly name: string;
  /** Unit of both numbers, e.g. `ops/s` or `ms`. */
  readonly unit: string;
  /** The reported value (the median when samples are given). */
  readonly subject: number;
  /** What the baseline is, e.g. `raw INSERT`. */
  readonly baselineName: string;
  readonly baseline: number;
  readonly note?: string;
  /** Every sample of the subject (≥ 3 outside smoke runs); printed as a spread. */
  readonly subjectSamples?: readonly number[];
  readonly baselineSamples?: readonly number[];
  /** The goal as a ratio subject / baseline, and whether higher or lower is better. */
  readonly goal?: { readonly ratio: number; readonly better: 'higher' | 'lower' };
}

/** A smoke run (CI): smallest sizes, fewest samples; numbers only prove the benchmark still runs. */
export const SMOKE = process.env.EVGEN_BENCH_SMOKE === '1';

/** Samples per measurement: 3 or more (EVGEN_BENCH_SAMPLES), 1 in a smoke run. */
export const SAMPLES = SMOKE ? 1 : Math.max(3, Number(process.env.EVGEN_BENCH_SAMPLES ?? 3));

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The nearest-rank p-th percentile (0 < p ≤ 100) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** A result from samples of both sides: medians, with the samples kept for the spread. */
export function fromSamples(
  result: Omit<BenchResult, 'subject' | 'baseline' | 'subjectSamples' | 'baselineSamples'>,
  subjectSamples: readonly number[],
  baselineSamples: readonly number[],
): BenchResult {
  return {
    ...result,
    subject: median(subjectSamples),
    baseline: median(baselineSamples),
    subjectSamples,
    baselineSamples,
  };
}
