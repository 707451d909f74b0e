/** One benchmark measurement, compared with a raw baseline measured in the same run. */
export interface BenchResult {
  /** What is measured, e.g. `outbox write (pg)`. */
  readonly name: string;
  /** Unit of both numbers, e.g. `ops/s` or `ms`. */
  readonly unit: string;
  readonly subject: number;
  /** What the baseline is, e.g. `raw INSERT`. */
  readonly baselineName: string;
  readonly baseline: number;
  readonly note?: string;
}
