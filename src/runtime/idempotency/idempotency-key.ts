/**
 * The `Idempotency-Key` value a client sent, checked before anything is written. The IETF
 * httpapi draft makes the field a Structured Field string (`"8e03978e-…"`); clients commonly
 * send the bare value, so both are accepted and mean the same key.
 *
 * Rule: 1 to {@link MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (0x20–0x7E, no
 * leading or trailing space). Anything else is refused with the reason, so a client learns what
 * to fix instead of a key being silently altered into another client's.
 */
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-migration.js';

/** Why a key was refused: missing (where one is required), empty, too long, or not printable ASCII. */
export type IdempotencyKeyProblem = 'missing' | 'empty' | 'too-long' | 'not-ascii';

/** A refused key: `problem` says which rule it broke, the message what to send instead. */
export class IdempotencyKeyError extends Error {
  override readonly name = 'IdempotencyKeyError';
  constructor(
    readonly problem: IdempotencyKeyProblem,
    message: string,
  ) {
    super(message);
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The key of a header value (`undefined` or an array when the header was absent or repeated).
 * Throws IdempotencyKeyError for a value breaking the rule above.
 */
export function parseIdempotencyKey(value: string | readonly string[] | undefined | null): string {
  if (value === undefined || value === null) {
    throw new IdempotencyKeyError(
      'missing',
      'Idempotency-Key header is required for this operation: send a unique value per intent (e.g. a UUID), and the same value when retrying it',
    );
  }
  if (typeof value !== 'string') {
    if (value.length !== 1)
      throw new IdempotencyKeyError('empty', 'Idempotency-Key header must be sent exactly once');
    return parseIdempotencyKey(value[0]);
  }
  let key = value.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (key === '') {
    throw new IdempotencyKeyError('empty', 'Idempotency-Key header must not be empty');
  }
  if (!PRINTABLE_ASCII.test(key) || key.includes('"') || key.includes('\\')) {
    throw new IdempotencyKeyError(
      'not-ascii',
      'Idempotency-Key must be printable ASCII (0x20–0x7E) without quotes or backslashes, e.g. a UUID',
    );
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new IdempotencyKeyError(
      'too-long',
      `Idempotency-Key must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}`,
    );
  }
  return key;
}
