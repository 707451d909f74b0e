/**
 * Turns the raw bytes of a received message into a JSON value, for every transport (RabbitMQ,
 * Kafka) and for `parseEnvelope`. A hostile or broken producer must not be able to stall or crash
 * a consumer, so the body is checked within limits whose cost is bounded before anything else:
 *
 *   - size: at most `maxBytes` (default 1 MiB), before decoding;
 *   - text: strict UTF-8 (an invalid sequence is an error, never a silent U+FFFD);
 *   - nesting: at most `maxDepth` levels of objects/arrays (default 64, as in the catalog);
 *     checked before `JSON.parse` for bodies over PARSE_FIRST_CHARS characters, after it for
 *     shorter ones (which it reads in under 0.1 ms however they nest);
 *   - numbers: a number beyond ±(2^53 − 1) is refused in every notation (`9007199254740993`,
 *     `9007199254740993.0`, `12345678901234567e0`, `1e20`), because JavaScript may silently round
 *     it (9007199254740993 would arrive as …992) and the writers refuse every such number too;
 *     so is a literal beyond the range of a double (`1e400`), which would arrive as Infinity.
 *
 * Every refusal is a `MessageBodyError` (never retryable: the same bytes fail the same way), so
 * the transports dead-letter the message with the reason.
 */
import { EvgenError } from './errors.js';

export interface MessageBodyLimits {
  /** Largest accepted body in bytes. Default 1 048 576 (1 MiB). */
  readonly maxBytes?: number;
  /** Deepest accepted nesting of objects and arrays. Default 64. */
  readonly maxDepth?: number;
}

export const DEFAULT_MESSAGE_BODY_LIMITS: Required<MessageBodyLimits> = Object.freeze({
  maxBytes: 1_048_576,
  maxDepth: 64,
});

export type MessageBodyProblem =
  'too-large' | 'too-deep' | 'invalid-utf8' | 'invalid-json' | 'unsafe-integer';

/** A body that cannot be decoded; `problem` says which check refused it. Never retryable. */
export class MessageBodyError extends EvgenError {
  readonly retryable = false;
  readonly code = 'MessageBodyError';
  constructor(
    readonly problem: MessageBodyProblem,
    message: string,
  ) {
    super(message);
    this.name = 'MessageBodyError';
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER).length;
const DEFAULT_LIMITS = messageBodyLimits();
/** Bodies up to this many characters are parsed before their nesting is known (decodeMessageBody). */
const PARSE_FIRST_CHARS = 2_048;

function checkLimit(name: string, value: number): number {
  if (!(Number.isInteger(value) && value >= 1) && value !== Number.POSITIVE_INFINITY)
    throw new RangeError(`${name} must be a positive integer (or Infinity)`);
  return value;
}

/** Resolves the limits, filling in the defaults; throws RangeError on a nonsensical limit. */
export function messageBodyLimits(limits: MessageBodyLimits = {}): Required<MessageBodyLimits> {
  return {
    maxBytes: checkLimit('maxBytes', limits.maxBytes ?? DEFAULT_MESSAGE_BODY_LIMITS.maxBytes),
    maxDepth: checkLimit('maxDepth', limits.maxDepth ?? DEFAULT_MESSAGE_BODY_LIMITS.maxDepth),
  };
}

/** Opening brackets anywhere in the text (strings included), counted up to `limit + 1`. */
function openingBracketsAbove(text: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1))
    if (++count > limit) return true;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1))
    if (++count > limit) return true;
  return false;
}

/** A finite number beyond ±(2^53 − 1): every such number is an integer that may have been rounded. */
export function isLargeNumber(value: number): boolean {
  return (
    (value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER) && Number.isFinite(value)
  );
}

/**
 * A parsed number the decoder refuses: beyond ±(2^53 − 1), ±Infinity included (a literal beyond
 * the range of a double). Every refused literal parses to one, whatever its notation.
 */
function isUnsafeNumber(value: number): boolean {
  return value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER;
}

/**
 * Whether a parsed object or array nests deeper than `levelsLeft` more levels below itself or
 * holds a number the decoder refuses; `scanJson` then finds the place for the message. Recursion
 * is bounded by the depth limit. It runs on every message, so children are tested in place and
 * only objects recurse.
 */
function needsScan(value: object, levelsLeft: number): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object') {
        if (item !== null && (levelsLeft === 0 || needsScan(item, levelsLeft - 1))) return true;
      } else if (typeof item === 'number' && isUnsafeNumber(item)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object') {
      if (item !== null && (levelsLeft === 0 || needsScan(item, levelsLeft - 1))) return true;
    } else if (typeof item === 'number' && isUnsafeNumber(item)) return true;
  }
  return false;
}

/**
 * Checks nesting depth and number literals of JSON text without parsing it: one pass that
 * tracks only whether it is inside a string. Malformed JSON is left for JSON.parse to report.
 */
function scanJson(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth)
        throw new MessageBodyError(
          'too-deep',
          `body nests objects/arrays deeper than ${maxDepth} levels (at character ${i})`,
        );
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      // A number literal: find its end. Only a literal of 16 or more digits, or one with a
      // fraction or an exponent, can be beyond ±(2^53 − 1); its parsed value decides.
      const start = i;
      let plain = true;
      let end = i + 1;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d >= 0x30 && d <= 0x39) continue;
        if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) plain = false;
        else break;
      }
      const literal = text.slice(start, end);
      const digits = literal.startsWith('-') ? literal.length - 1 : literal.length;
      if ((!plain || digits >= MAX_SAFE_DIGITS) && isUnsafeNumber(Number(literal)))
        throw new MessageBodyError(
          'unsafe-integer',
          `body contains the number ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal}, ` +
            (Number.isFinite(Number(literal))
              ? 'beyond ±(2^53 − 1): JavaScript cannot represent every such integer exactly and may round it (send it as a string)'
              : 'beyond the range of a double: JavaScript would read it as Infinity (send it as a string)'),
        );
      i = end - 1;
    }
  }
}

/**
 * Decodes a message body (bytes, or text already decoded) into a JSON value within the limits.
 * Throws `MessageBodyError` with the reason; throws RangeError for invalid limits.
 */
export function decodeMessageBody(
  content: Uint8Array | string,
  limits: MessageBodyLimits = {},
): unknown {
  const { maxBytes, maxDepth } =
    limits.maxBytes === undefined && limits.maxDepth === undefined
      ? DEFAULT_LIMITS
      : messageBodyLimits(limits);
  let text: string;
  if (typeof content === 'string') {
    // A UTF-16 code unit is at most 3 UTF-8 bytes: short texts need no byte count.
    const size = content.length * 3 <= maxBytes ? 0 : Buffer.byteLength(content, 'utf8');
    if (size > maxBytes)
      throw new MessageBodyError(
        'too-large',
        `body is ${size} bytes, more than the limit of ${maxBytes}`,
      );
    if (LONE_SURROGATE.test(content))
      throw new MessageBodyError('invalid-utf8', 'body contains a lone UTF-16 surrogate');
    text = content;
  } else {
    if (content.byteLength > maxBytes)
      throw new MessageBodyError(
        'too-large',
        `body is ${content.byteLength} bytes, more than the limit of ${maxBytes}`,
      );
    try {
      text = strictUtf8.decode(content);
    } catch {
      throw new MessageBodyError('invalid-utf8', 'body is not valid UTF-8');
    }
  }
  // Fast path for typical bodies: the parsed value tells whether they nest too deep or hold an
  // integer literal that may have been rounded, and only then does the character-by-character
  // scan (several times the cost of JSON.parse itself) find where. A short body is parsed first:
  // JSON.parse is iterative in V8, and the worst short body (1 024 nested arrays) costs ~80 µs
  // here before it is refused (12 µs when counted first), less than dead-lettering it. Counting
  // brackets first cost as much as the walk on a 435-byte envelope. A longer body is parsed only
  // when its opening brackets (counted with native string search, strings included) are at most
  // `maxDepth`, so a hostile megabyte of `[` is refused before any parsing.
  const parseFirst = text.length <= PARSE_FIRST_CHARS;
  const scanned = !parseFirst && openingBracketsAbove(text, maxDepth);
  if (scanned) scanJson(text, maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    // As for a long body: nesting (or a number) the scan refuses is reported before bad syntax.
    if (parseFirst && openingBracketsAbove(text, maxDepth)) scanJson(text, maxDepth);
    throw new MessageBodyError('invalid-json', `body is not JSON: ${(error as Error).message}`);
  }
  if (
    !scanned &&
    (typeof value === 'object'
      ? value !== null && needsScan(value, maxDepth - 1)
      : typeof value === 'number' && isUnsafeNumber(value))
  )
    scanJson(text, maxDepth);
  return value;
}
