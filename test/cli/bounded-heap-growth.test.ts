/**
 * The build bounds V8's heap growth only for its own length and never over a user's choice. (What
 * the bound does to peak memory and CPU is measured by `npm run bench -- build`, not asserted.)
 */
import { describe, expect, it } from 'vitest';
import { userSetsHeapGrowth, withBoundedHeapGrowth } from '../../src/cli/bounded-heap-growth.js';

describe('withBoundedHeapGrowth', () => {
  it("returns the work's result and passes its failure on", async () => {
    await expect(withBoundedHeapGrowth(async () => 42)).resolves.toBe(42);
    await expect(
      withBoundedHeapGrowth(async () => {
        throw new Error('target failed');
      }),
    ).rejects.toThrow('target failed');
  });

  it("leaves a user's own growth factor alone, in node's arguments or NODE_OPTIONS", () => {
    expect(userSetsHeapGrowth(['--heap-growing-percent=20'], '')).toBe(true);
    expect(userSetsHeapGrowth([], '--max-old-space-size=512 --heap_growing_percent=30')).toBe(true);
    expect(userSetsHeapGrowth(['--max-old-space-size=512'], '--enable-source-maps')).toBe(false);
  });
});
