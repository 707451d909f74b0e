/**
 * Keeps a long build's heap near its live set. A cold build of 1000 events allocates gigabytes
 * of short-lived objects (an ajv instance, json-schema-to-typescript and prettier per event)
 * while what stays alive is ~50 MB (loaded modules and the catalog); V8 lets the old generation
 * grow to up to four times its live set after each full collection, and that headroom, not held
 * data, made most of a build's peak RSS. V8's `--heap-growing-percent` fixes the growth factor
 * instead; V8 reads it at every collection, so it can be set for the length of a build. It is a
 * soft bound: a catalog with a larger live set still builds, with more full collections. A
 * `--heap-growing-percent` of the user's own (in `NODE_OPTIONS` or node's arguments) wins.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * After a full collection the old generation may grow to (1 + this / 100) times its live set:
 * 2×, chosen by measurement (docs/performance.md); V8's own factor reaches 4×.
 */
export const HEAP_GROWING_PERCENT = 100;

const FLAG = /--heap[-_]growing[-_]percent/;

/** Whether the user set V8's growth factor for this process (node arguments or NODE_OPTIONS). */
export function userSetsHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): boolean {
  return execArgv.some((arg) => FLAG.test(arg)) || FLAG.test(nodeOptions);
}

/** Runs `work` with the heap's growth factor bounded, then gives V8 back its own policy. */
export async function withBoundedHeapGrowth<T>(work: () => Promise<T>): Promise<T> {
  if (userSetsHeapGrowth()) return work();
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  try {
    return await work();
  } finally {
    // 0 is V8's default: the factor follows V8's own measurements again.
    setFlagsFromString('--heap-growing-percent=0');
  }
}
