import { describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/runtime/index.js';
import { isUuid } from '../../src/runtime/envelope-values.js';
import { uuidV7 } from '../../src/runtime/uuid-v7.js';

describe('buffered UUIDv7 generator', () => {
  it('sets version 7 and the RFC 9562 variant on every id', () => {
    for (let i = 0; i < 5_000; i++) {
      const id = uuidV7();
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(id[19]);
    }
  });

  it('mints ids that sort in the order they were made (many per millisecond) and never repeat', () => {
    // More ids than the random pool holds, so refills happen in between.
    const ids = Array.from({ length: 50_000 }, () => newMessageId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) throw new Error(`${ids[i - 1]} is not before ${ids[i]}`);
    }
  });

  it('carries the current Unix time in milliseconds in its first 48 bits', () => {
    const before = Date.now();
    const id = uuidV7();
    const after = Date.now();
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    // May run ahead of the clock only when a millisecond's counter overflowed, which 1 id cannot.
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('keeps the random tail random: the last 32 bits differ between consecutive ids', () => {
    const tails = new Set(Array.from({ length: 1_000 }, () => uuidV7().slice(-8)));
    expect(tails.size).toBeGreaterThan(990);
  });

  it('stays ordered when the clock goes back', () => {
    const realNow = Date.now;
    const first = uuidV7();
    try {
      Date.now = () => realNow() - 60_000;
      const second = uuidV7();
      expect(second > first).toBe(true);
      expect(second.slice(0, 13)).toBe(first.slice(0, 13));
    } finally {
      Date.now = realNow;
    }
  });
});
