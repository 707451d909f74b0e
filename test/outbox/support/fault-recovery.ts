/** Recovery after a fault, measured from publish times (the relay fault tests). */

/**
 * After a fault ends at `endedAt`: how long until every aggregate had published its next waiting
 * row (recovery: a row held back by a lost SENT mark stalls its aggregate for a whole lease), and
 * until every row written before the end was published (caught up: bound by the backlog, one
 * confirm at a time per aggregate).
 */
export function recovery(
  waited: readonly { id: string; aggregate: string }[],
  publishedAt: ReadonlyMap<string, number>,
  endedAt: number,
  aggregates: readonly string[],
): { recoveryMs: number; caughtUpMs: number } {
  const after = (row: { id: string }) => publishedAt.get(row.id)! - endedAt;
  const resumed = aggregates.map((aggregate) => {
    const pending = waited.filter((row) => row.aggregate === aggregate && after(row) >= 0);
    return pending.length === 0 ? 0 : Math.min(...pending.map(after));
  });
  return {
    recoveryMs: Math.max(0, ...resumed),
    caughtUpMs: Math.max(0, ...waited.map(after)),
  };
}
