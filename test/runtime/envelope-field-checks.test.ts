/**
 * `isUuid` and `isDateTime` read character codes for speed; these tests compare them with the
 * plain regular-expression definitions over valid values and many mutations of them.
 */
import { describe, expect, it } from 'vitest';
import { isDateTime, isUuid } from '../../src/runtime/envelope-values.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

function referenceDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (match === null) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year!, month, 0)).getUTCDate();
  const offsetOk = match[9] === undefined || (Number(match[9]) <= 23 && Number(match[10]) <= 59);
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 60 &&
    offsetOk
  );
}

/** Deterministic pseudo-random numbers, so a failure can be reproduced. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

// \u00e1 and \u01ad equal 'a' and '-' in their low 7 bits: a table indexed by them must still refuse them.
const ALPHABET = '0123456789abcdefABCDEFgxyzTtZz+-:. \u0660\uff10\u00e1\u01ad';

function mutations(valid: readonly string[], next: () => number): string[] {
  const out: string[] = [];
  for (const value of valid) {
    for (let k = 0; k < 300; k++) {
      const at = Math.floor(next() * (value.length + 1));
      const char = ALPHABET[Math.floor(next() * ALPHABET.length)]!;
      const kind = next();
      out.push(
        kind < 0.5
          ? value.slice(0, at) + char + value.slice(at + 1)
          : kind < 0.75
            ? value.slice(0, at) + char + value.slice(at)
            : value.slice(0, at) + value.slice(at + 1),
      );
    }
  }
  return out;
}

describe('envelope field checks', () => {
  it('isDateTime agrees with the regular-expression definition', () => {
    const valid = [
      '2026-01-02T03:04:05Z',
      '2024-02-29T23:59:60.123456+14:00',
      '2023-02-28t00:00:00z',
      '1999-12-31 23:59:59-05:30',
      '2023-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2000-02-29T00:00:00.5Z',
      '1900-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-02T24:00:00Z',
      '2026-01-02T03:04:05+24:00',
      '2026-01-02T03:04:05.Z',
    ];
    for (const value of [...valid, ...mutations(valid, random(7))])
      expect([value, isDateTime(value)]).toEqual([value, referenceDateTime(value)]);
  });

  it('isUuid agrees with the regular-expression definition', () => {
    const valid = [
      '0190a6b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b',
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      crypto.randomUUID(),
    ];
    for (const value of [...valid, ...mutations(valid, random(11))])
      expect([value, isUuid(value)]).toEqual([value, UUID.test(value)]);
  });
});
