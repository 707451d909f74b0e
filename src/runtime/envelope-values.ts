/** Value checks of envelope fields: message ids, timestamps, aggregate versions. */

/** Days of each month in a common year (index 0 = January). */
const DAYS_IN_MONTH: readonly number[] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// Both checks run on every envelope built or parsed; they read character codes instead of
// matching a regular expression (several times faster, and no match arrays to collect).

/** Character class of each ASCII code: 1 for a hex digit (either case), 2 for `-`, 0 otherwise. */
const UUID_CHAR_CLASS = new Uint8Array(128);
for (const c of '0123456789abcdefABCDEF') UUID_CHAR_CLASS[c.charCodeAt(0)] = 1;
UUID_CHAR_CLASS[0x2d /* - */] = 2;
/** The class each position of a canonical UUID must have (8-4-4-4-12 hex digits). */
const UUID_LAYOUT = Uint8Array.from({ length: 36 }, (_, i) =>
  i === 8 || i === 13 || i === 18 || i === 23 ? 2 : 1,
);

/**
 * A UUID in its canonical text form (any version: ids minted elsewhere are accepted too). One
 * table lookup per character and no early exits: a branch per character cost twice as much.
 */
export function isUuid(value: string): boolean {
  if (value.length !== 36) return false;
  let mismatch = 0;
  for (let i = 0; i < 36; i++) {
    const c = value.charCodeAt(i);
    // c >> 7 is non-zero for any code beyond ASCII.
    mismatch |= (UUID_CHAR_CLASS[c & 0x7f]! ^ UUID_LAYOUT[i]!) | (c >> 7);
  }
  return mismatch === 0;
}

/** The value of `length` decimal digits at `at`, or -1 if any is not a digit. */
function digits(value: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** RFC 3339 date-time with a real calendar date (no 2024-02-30) and an offset. */
export function isDateTime(value: string): boolean {
  // YYYY-MM-DDTHH:MM:SS, then an optional fraction, then Z or ±HH:MM.
  if (value.length < 20) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  const t = value.charCodeAt(10);
  if (
    year < 0 ||
    value.charCodeAt(4) !== 0x2d ||
    value.charCodeAt(7) !== 0x2d ||
    !(t === 0x54 /* T */ || t === 0x74 /* t */ || t === 0x20) ||
    value.charCodeAt(13) !== 0x3a ||
    value.charCodeAt(16) !== 0x3a ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 60
  )
    return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false;
  let at = 19;
  if (value.charCodeAt(at) === 0x2e /* . */) {
    const first = ++at;
    while (at < value.length && digits(value, at, 1) >= 0) at++;
    if (at === first) return false;
  }
  const zone = value.charCodeAt(at);
  if (zone === 0x5a /* Z */ || zone === 0x7a /* z */) return at + 1 === value.length;
  if (zone !== 0x2b /* + */ && zone !== 0x2d /* - */) return false;
  const offsetHour = digits(value, at + 1, 2);
  const offsetMinute = digits(value, at + 4, 2);
  return (
    at + 6 === value.length &&
    value.charCodeAt(at + 3) === 0x3a &&
    offsetHour >= 0 &&
    offsetHour <= 23 &&
    offsetMinute >= 0 &&
    offsetMinute <= 59
  );
}

/** An event's schema version: a positive safe integer. */
export function isSchemaVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/** A per-aggregate sequence number: a non-negative safe integer. */
export function isAggregateVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
