/**
 * A label whose distinct values are capped: the first `max` values seen are kept as they are,
 * every later one is reported as `other`. Each distinct label value is a time series Prometheus
 * stores for as long as it exists, so a label fed from message data (an event type a producer
 * made up) must not grow without bound.
 */
export const OTHER_LABEL_VALUE = 'other';

export class BoundedLabel {
  readonly #seen = new Set<string>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`a label's value cap must be a positive integer, got ${max}`);
  }

  /** `value` when it is one of the first `max` distinct values seen, else `other`. */
  value(value: string): string {
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.max) return OTHER_LABEL_VALUE;
    this.#seen.add(value);
    return value;
  }
}
