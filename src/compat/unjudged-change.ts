/**
 * Policy `evgen` promises never to call a change compatible that can make a reader reject what a
 * writer sends. For a few keywords it cannot decide that by comparing schemas (a `format` added or
 * changed, a different `if`, `contains` or `propertyNames`), and Confluent's difference types have
 * no name for them. Rather than guess, the comparison stops with this error at the keyword; the
 * catalog check reports it as a problem (exit 2) naming the file, the pointer and what to do.
 */
export class UnjudgedChangeError extends Error {
  constructor(
    /** The keyword, e.g. `format` or `if`. */
    readonly keyword: string,
    /** `#/…` fragment of the keyword in the update (reader) side. */
    readonly path: string,
  ) {
    super(`evgen cannot judge changes to "${keyword}" at ${path}`);
    this.name = 'UnjudgedChangeError';
  }
}

/** What to do about an unjudged change, for diagnostics. */
export const UNJUDGED_HINT =
  'keep the keyword as the earlier version has it (removing it is fine), publish the change as a new event version or type, or check this event with policy "confluent"';
