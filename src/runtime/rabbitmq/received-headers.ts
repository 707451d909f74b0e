/**
 * Which headers of a received message the consumer runner may trust and copy onto a retry copy or
 * dead letter.
 *
 * Trust: evgen's own counters and diagnostics (`x-evgen-attempt`, `x-evgen-original-*`, failure
 * times, …) are only believed on a delivery that came back through evgen's own path — a delay
 * tier expiring into the work queue or a replay, both through the default exchange (`''`). On a
 * first receipt (from a producer's exchange) they are dropped, so a sender cannot force immediate
 * dead-lettering with `x-evgen-attempt: 99` or spoof where a message came from. Keep producers'
 * write permission off the default exchange (`amq.default`) for this to hold.
 *
 * Re-encodability: amqplib decodes any header table, but it cannot encode every table it decoded
 * (a table with its own `!` key is read back as a typed value and fails). A header that might not
 * encode is moved, serialized as JSON, into `x-evgen-unencodable-headers`, so a retry copy or dead
 * letter can always be published and the original value is still there to inspect.
 */
import type { ConsumeMessage } from 'amqplib';
import { EVGEN_HEADERS } from './amqp-message.js';

/** Broker-maintained dead-letter history: never copied, never counted (its counting changed in 3.13). */
const BROKER_HEADERS = /^x-(death$|first-death-|last-death-)/;

/** Headers only the runner and the replayer write; ignored on a first receipt. */
const RUNNER_HEADERS: ReadonlySet<string> = new Set([
  EVGEN_HEADERS.attempt,
  EVGEN_HEADERS.firstFailureAt,
  EVGEN_HEADERS.lastFailureAt,
  EVGEN_HEADERS.lastErrorType,
  EVGEN_HEADERS.lastError,
  EVGEN_HEADERS.originalExchange,
  EVGEN_HEADERS.originalRoutingKey,
  EVGEN_HEADERS.errorType,
  EVGEN_HEADERS.errorMessage,
  EVGEN_HEADERS.attempts,
  EVGEN_HEADERS.consumer,
  EVGEN_HEADERS.deadLetteredAt,
  EVGEN_HEADERS.replays,
  EVGEN_HEADERS.replayedAt,
  EVGEN_HEADERS.gapSince,
  EVGEN_HEADERS.gapExpected,
  EVGEN_HEADERS.gapFirst,
  EVGEN_HEADERS.cut,
]);

/** Where headers that could not be copied as they are go, as one JSON object text. */
export const UNENCODABLE_HEADERS = 'x-evgen-unencodable-headers';

const MAX_TABLE_DEPTH = 16;
const MAX_SHORT_STRING = 255;

/** Whether a delivery came back through evgen's own retry or replay path (the default exchange). */
function isEvgenRedelivery(message: Pick<ConsumeMessage, 'fields'>): boolean {
  return message.fields.exchange === '';
}

function isTypedValue(value: Record<string, unknown>): boolean {
  // The two typed values amqplib's decoder produces; anything else with a `!` key does not encode.
  const inner = value.value;
  if (value['!'] === 'timestamp') return Number.isSafeInteger(inner) && (inner as number) >= 0;
  if (value['!'] === 'decimal')
    return (
      typeof inner === 'object' &&
      inner !== null &&
      Number.isInteger((inner as { places?: unknown }).places) &&
      Number.isInteger((inner as { digits?: unknown }).digits)
    );
  return false;
}

/** Whether amqplib can encode the value as it is (conservative: false when unsure). */
function isEncodableHeaderValue(value: unknown, depth = 0): boolean {
  if (depth > MAX_TABLE_DEPTH) return false;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null || Buffer.isBuffer(value)) return true;
  if (Array.isArray(value)) return value.every((item) => isEncodableHeaderValue(item, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  const table = value as Record<string, unknown>;
  if (Object.hasOwn(table, '!')) return isTypedValue(table);
  return Object.entries(table).every(
    ([key, item]) =>
      Buffer.byteLength(key, 'utf8') <= MAX_SHORT_STRING && isEncodableHeaderValue(item, depth + 1),
  );
}

/** Headers as JSON text (Buffers as `{type,data}`), for inspection only. */
export function serializeHeaders(headers: Record<string, unknown>): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(headers, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[circular]';
      seen.add(value);
    }
    return value;
  });
}

/**
 * The headers of a received message that a copy of it (retry copy, dead letter) carries: broker
 * history dropped, runner headers dropped unless the delivery came back through evgen's path, and
 * anything amqplib might fail to encode moved into `x-evgen-unencodable-headers`.
 */
export function copyableHeaders(
  message: Pick<ConsumeMessage, 'fields' | 'properties'>,
): Record<string, unknown> {
  const trusted = isEvgenRedelivery(message);
  const copy: Record<string, unknown> = {};
  const unencodable: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    if (BROKER_HEADERS.test(name)) continue;
    if (!trusted && (RUNNER_HEADERS.has(name) || name === UNENCODABLE_HEADERS)) continue;
    if (Buffer.byteLength(name, 'utf8') <= MAX_SHORT_STRING && isEncodableHeaderValue(value))
      copy[name] = value;
    else unencodable[name] = value;
  }
  if (Object.keys(unencodable).length > 0) {
    const previous = copy[UNENCODABLE_HEADERS];
    // A header moved on an earlier attempt stays with the new ones.
    if (typeof previous === 'string') unencodable[UNENCODABLE_HEADERS] = previous;
    copy[UNENCODABLE_HEADERS] = serializeHeaders(unencodable);
  }
  return copy;
}

/** The headers evgen reads on a delivery: runner headers only when evgen itself sent it back. */
export function trustedHeaders(
  message: Pick<ConsumeMessage, 'fields' | 'properties'>,
): Record<string, unknown> {
  const headers = message.properties.headers ?? {};
  if (isEvgenRedelivery(message)) return headers;
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers))
    if (!RUNNER_HEADERS.has(name)) result[name] = value;
  return result;
}
