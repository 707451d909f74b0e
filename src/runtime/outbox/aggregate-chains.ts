/** Groups claimed rows into one chain per aggregate, each in id order (the publish order). */
import type { ClaimedRow } from './claim-query.js';

export function groupByAggregate(rows: readonly ClaimedRow[]): ClaimedRow[][] {
  const sorted = [...rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const chains = new Map<string, ClaimedRow[]>();
  for (const row of sorted) {
    const key = JSON.stringify([row.aggregate_type, row.aggregate_id]);
    const chain = chains.get(key);
    if (chain) chain.push(row);
    else chains.set(key, [row]);
  }
  return [...chains.values()];
}
