/** Groups claimed rows into one chain per aggregate, each in id order (the publish order). */
import type { ClaimedRow } from './claim-query.js';

/** One string per aggregate (type and id), for maps keyed by aggregate. */
export const aggregateKey = (row: {
  readonly aggregate_type: string;
  readonly aggregate_id: string;
}): string => JSON.stringify([row.aggregate_type, row.aggregate_id]);

export function groupByAggregate(rows: readonly ClaimedRow[]): ClaimedRow[][] {
  const sorted = [...rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const chains = new Map<string, ClaimedRow[]>();
  for (const row of sorted) {
    const key = aggregateKey(row);
    const chain = chains.get(key);
    if (chain) chain.push(row);
    else chains.set(key, [row]);
  }
  return [...chains.values()];
}
