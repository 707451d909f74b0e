/**
 * The one way the delivery core recognises an AggregateVersionGapError behind a failure, for both
 * questions it asks: is this failure a gap (its class), and which version does the aggregate wait
 * for (the gap wait's clock). The error may be the gap itself or wrap it through `cause`: the
 * inbox guard wraps it in InboxHandlerError, and a user's handler may wrap that again. Matching by
 * `code` (not `instanceof`) keeps errors from another copy of the runtime recognised.
 */

/** How deep a `cause` chain is followed: enough for every wrapper seen, bounded for cycles. */
const MAX_CAUSE_DEPTH = 8;

export interface FoundGap {
  /** The version the aggregate expects next; undefined when only a wrapper's `causeType` names the gap. */
  readonly expected: number | undefined;
}

/** The gap behind `error` (itself or a `cause` up to 8 levels down), or undefined when none is. */
export function findGapError(error: unknown): FoundGap | undefined {
  let namedByWrapper = false;
  let current = error;
  for (
    let depth = 0;
    depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null;
    depth++
  ) {
    const { code, causeType, expected, cause } = current as {
      code?: unknown;
      causeType?: unknown;
      expected?: unknown;
      cause?: unknown;
    };
    if (code === 'AggregateVersionGapError')
      return { expected: Number.isSafeInteger(expected) ? (expected as number) : undefined };
    if (causeType === 'AggregateVersionGapError') namedByWrapper = true;
    current = cause;
  }
  return namedByWrapper ? { expected: undefined } : undefined;
}
