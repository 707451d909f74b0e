/**
 * What a copy of a received message (retry copy, gap wait, dead letter, replay) may carry, so
 * that publishing it can never fail because of the message's content.
 *
 * A received message can hold what evgen cannot send again: amqplib encodes a header table into a
 * 64 KiB buffer (a Java or .NET producer may send 100 KB of headers; RabbitMQ takes up to its
 * frame_max, 128 KiB by default), and a shortstr property is at most 255 bytes (an id taken from
 * a body, or a property whose invalid UTF-8 grew when decoded, can be longer). A copy that does
 * not fit would make amqplib throw, the copy fail and the delivery come back forever. So every
 * copy is fitted before it is published:
 *   - a shortstr property longer than 255 bytes is dropped;
 *   - headers are measured as amqplib encodes them; past MAX_COPY_HEADER_BYTES, the largest
 *     headers the runner did not write itself are dropped until the table fits;
 *   - sender-selected distribution headers (`CC`, `BCC`) are never copied: on a copy they would
 *     make the broker deliver it to whatever queues a producer named.
 * Whatever was dropped is named, with its size, in `x-evgen-cut` (JSON text).
 */
import type { Options } from 'amqplib';
import { AMQP_LIMITS } from '../broker-limits.js';

/** Publish properties of a copy (a messageId is required to match returns). */
type CopyProperties = Options.Publish & { readonly messageId: string };

/** Where a copy records what was left off it: JSON `{ "<property or header>": "<why>" }`. */
export const CUT_HEADER = 'x-evgen-cut';

/**
 * Largest encoded header table a copy gets, `x-evgen-cut` included: below amqplib's 64 KiB
 * encoding buffer and well inside RabbitMQ's default frame_max (128 KiB).
 */
export const MAX_COPY_HEADER_BYTES = 56 * 1024;
/** Room kept for `x-evgen-cut` itself (at most 17 clipped entries) inside that budget. */
const CUT_RESERVE = 8 * 1024;
/** A header the runner wrote is kept only up to this size (a producer may have forged it). */
const MAX_KEPT_HEADER_BYTES = 8 * 1024;
const MAX_SHORT_STRING = AMQP_LIMITS.shortStringBytes;
/** `x-evgen-cut` names at most this many entries (the rest as a count), so it stays small. */
const MAX_CUT_ENTRIES = 16;

/** RabbitMQ routes a message with these headers to the queues they name, too. */
const DISTRIBUTION_HEADERS = /^b?cc$/i;

const SHORT_STRING_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'type',
  'userId',
  'appId',
] as const;

/** Whether a header is sender-selected distribution (`CC`/`BCC`), which no copy may carry. */
function isDistributionHeader(name: string): boolean {
  return DISTRIBUTION_HEADERS.test(name);
}

/** Whether `text` fits an AMQP shortstr property (255 bytes of UTF-8). */
export function fitsShortString(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') <= MAX_SHORT_STRING;
}

/** Bytes amqplib writes for a field value (an upper bound for numbers and typed values). */
export function encodedValueBytes(value: unknown, depth = 0): number {
  if (depth > 32) return Number.POSITIVE_INFINITY;
  switch (typeof value) {
    case 'string':
      return 5 + Buffer.byteLength(value, 'utf8');
    case 'boolean':
      return 2;
    case 'number':
    case 'bigint':
      return 9;
    case 'undefined':
      return 0;
    case 'object':
      break;
    default:
      return Number.POSITIVE_INFINITY;
  }
  if (value === null) return 1;
  if (Buffer.isBuffer(value)) return 5 + value.length;
  if (Array.isArray(value))
    return 5 + value.reduce<number>((sum, item) => sum + encodedValueBytes(item, depth + 1), 0);
  const table = value as Record<string, unknown>;
  // amqplib's typed values ({'!': 'timestamp', value}, decimals, …): at most 9 bytes.
  if (Object.hasOwn(table, '!')) return 10;
  return 1 + encodedTableBytes(table, depth + 1);
}

/** Bytes amqplib writes for a header table (length prefix included). */
export function encodedTableBytes(table: Readonly<Record<string, unknown>>, depth = 0): number {
  let bytes = 4;
  for (const [name, value] of Object.entries(table))
    if (value !== undefined)
      bytes += 1 + Buffer.byteLength(name, 'utf8') + encodedValueBytes(value, depth);
  return bytes;
}

/** A record of what a copy left off, written into `x-evgen-cut`. */
export class CopyCuts {
  private readonly entries = new Map<string, string>();

  constructor(earlier?: unknown) {
    // Cuts made on an earlier copy of the same message stay named.
    if (typeof earlier !== 'string') return;
    try {
      const parsed: unknown = JSON.parse(earlier);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        for (const [field, why] of Object.entries(parsed))
          if (typeof why === 'string') this.entries.set(field, why);
    } catch {
      // Not ours (a trusted copy always carries valid JSON): the new cuts stand alone.
    }
  }

  add(field: string, why: string): void {
    this.entries.set(field, why);
  }

  get size(): number {
    return this.entries.size;
  }

  /** JSON text, bounded: names are clipped and past MAX_CUT_ENTRIES only counted. */
  toHeader(): string {
    const shown = [...this.entries].slice(0, MAX_CUT_ENTRIES);
    const record: Record<string, string> = {};
    for (const [field, why] of shown) record[field.slice(0, 60)] = why.slice(0, 80);
    const more = this.entries.size - shown.length;
    if (more > 0) record['…'] = `${more} more fields cut`;
    return JSON.stringify(record);
  }
}

/**
 * `properties` fitted as described in the module comment; `keep(name)` names the headers the
 * runner writes itself, which are dropped only when larger than 8 KiB (never, unless forged). A
 * dropped messageId is replaced by `fallbackId` (a copy needs one to match a possible return).
 */
export function fitCopy(
  properties: CopyProperties,
  keep: (header: string) => boolean,
  fallbackId: () => string,
): CopyProperties {
  const headers: Record<string, unknown> = { ...(properties.headers as Record<string, unknown>) };
  const cuts = new CopyCuts(headers[CUT_HEADER]);
  delete headers[CUT_HEADER];
  const fitted = { ...properties } as Record<string, unknown>;
  for (const name of SHORT_STRING_PROPERTIES) {
    const value = fitted[name];
    if (typeof value !== 'string') continue;
    if (fitsShortString(value)) continue;
    const bytes = Buffer.byteLength(value, 'utf8');
    delete fitted[name];
    cuts.add(`property ${name}`, `dropped: ${bytes} bytes, an AMQP shortstr holds 255`);
  }
  if (fitted.messageId === undefined) fitted.messageId = fallbackId();
  for (const name of Object.keys(headers)) {
    if (!isDistributionHeader(name)) continue;
    delete headers[name];
    cuts.add(`header ${name}`, 'dropped: sender-selected distribution is never copied');
  }
  let bytes = encodedTableBytes(headers);
  if (bytes > MAX_COPY_HEADER_BYTES - CUT_RESERVE) {
    const droppable = Object.keys(headers)
      .map((name) => ({ name, size: encodedTableBytes({ [name]: headers[name] }) - 4 }))
      .filter(({ name, size }) => !keep(name) || size > MAX_KEPT_HEADER_BYTES)
      .sort((a, b) => b.size - a.size);
    for (const { name, size } of droppable) {
      if (bytes <= MAX_COPY_HEADER_BYTES - CUT_RESERVE) break;
      delete headers[name];
      bytes -= size;
      cuts.add(
        `header ${name}`,
        `dropped: ${size} bytes, a copy's headers must fit ${MAX_COPY_HEADER_BYTES} bytes`,
      );
    }
  }
  if (cuts.size > 0) headers[CUT_HEADER] = cuts.toHeader();
  fitted.headers = headers;
  return fitted as unknown as CopyProperties;
}
