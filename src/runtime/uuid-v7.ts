/**
 * UUIDv7 message ids (RFC 9562), minted from a buffer of random bytes refilled in blocks: asking
 * the operating system for 16 fresh bytes per id was most of an envelope constructor's own time.
 *
 * Layout: 48-bit Unix milliseconds, version 7, then a 42-bit counter (the 12 `rand_a` bits and
 * the first 30 bits of `rand_b`, after the variant) and 32 random bits. The counter starts at a
 * random value below 2^41 in every new millisecond and is incremented for each further id in the
 * same millisecond (RFC 9562's "fixed bit-length dedicated counter" method), so ids of one
 * process sort in the order they were minted. If the clock goes back, the last timestamp is
 * kept; if the counter would overflow, the timestamp moves on by one millisecond.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

const HEX: readonly string[] = Array.from({ length: 256 }, (_, byte) =>
  byte.toString(16).padStart(2, '0'),
);

// The counter is high (12 bits) · 2^30 + low (30 bits).
const HIGH_LIMIT = 2 ** 12;
const LOW_LIMIT = 2 ** 30;

let lastMs = -1;
let counterHigh = 0; // 12 bits: rand_a
let counterLow = 0; // 30 bits: the first bits of rand_b after the variant

/** Reads `count` random bytes from the pool; the returned offset is valid until the next call. */
function take(count: number): number {
  if (poolOffset + count > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += count;
  return offset;
}

function reseedCounter(): void {
  const at = take(6);
  // Top bit of the 42-bit counter is zero, so at least 2^41 ids fit in every millisecond.
  counterHigh = ((pool[at]! << 4) | (pool[at + 1]! >> 4)) & 0x7ff;
  counterLow = pool.readUInt32BE(at + 2) & (LOW_LIMIT - 1);
}

/** A new UUIDv7, greater than every id this process minted before. */
export function uuidV7(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    reseedCounter();
  } else if (++counterLow === LOW_LIMIT) {
    counterLow = 0;
    if (++counterHigh === HIGH_LIMIT) {
      // 2^42 ids in one millisecond: borrow the next one.
      lastMs++;
      reseedCounter();
    }
  }
  const ms = lastMs;
  const high = Math.floor(ms / 2 ** 16); // first 32 bits of the timestamp
  const low = ms % 2 ** 16;
  const at = take(4);
  const b6 = 0x70 | (counterHigh >> 8);
  const b7 = counterHigh & 0xff;
  const b8 = 0x80 | (counterLow >>> 24);
  return (
    HEX[high >>> 24]! +
    HEX[(high >>> 16) & 0xff]! +
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    '-' +
    HEX[low >>> 8]! +
    HEX[low & 0xff]! +
    '-' +
    HEX[b6]! +
    HEX[b7]! +
    '-' +
    HEX[b8]! +
    HEX[(counterLow >>> 16) & 0xff]! +
    '-' +
    HEX[(counterLow >>> 8) & 0xff]! +
    HEX[counterLow & 0xff]! +
    HEX[pool[at]!]! +
    HEX[pool[at + 1]!]! +
    HEX[pool[at + 2]!]! +
    HEX[pool[at + 3]!]!
  );
}
