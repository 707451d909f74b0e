/**
 * Maximum-cardinality matching in a bipartite graph (augmenting paths). Used to pair the
 * subschemas of two combined schemas so that every alternative finds a compatible partner.
 */

/** `edges[i]` lists the right-hand vertices left vertex `i` may pair with. Returns right → left. */
export function maximumMatching(
  leftCount: number,
  rightCount: number,
  edges: readonly (readonly number[])[],
): Map<number, number> {
  const matchOfRight = new Array<number>(rightCount).fill(-1);
  const tryAugment = (left: number, seen: boolean[]): boolean => {
    for (const right of edges[left] ?? []) {
      if (seen[right]) continue;
      seen[right] = true;
      const current = matchOfRight[right]!;
      if (current === -1 || tryAugment(current, seen)) {
        matchOfRight[right] = left;
        return true;
      }
    }
    return false;
  };
  for (let left = 0; left < leftCount; left++)
    tryAugment(left, new Array<boolean>(rightCount).fill(false));
  const matching = new Map<number, number>();
  matchOfRight.forEach((left, right) => {
    if (left !== -1) matching.set(right, left);
  });
  return matching;
}
