/**
 * The fingerprint of a request: what "the same request" means when a key comes back. Same key +
 * same fingerprint → the stored result; same key + another fingerprint → a conflict.
 *
 * Default rule: SHA-256 (hex) over the upper-cased method, the path with its query string as
 * received, and the body in canonical form: a JSON body (an object, array or other JSON value)
 * re-serialised with object keys sorted at every depth and no whitespace, so key order and
 * formatting do not matter; any other body (text, bytes) as its exact bytes; no body as nothing.
 * Headers are not part of it (a retry may carry a new trace id or date). Services replace the
 * rule with the `fingerprint` option of the adapters.
 */
import { createHash } from 'node:crypto';

/** What the default fingerprint reads of a request. */
export interface FingerprintInput {
  readonly method: string;
  /** Path and query string, e.g. `/orders?dryRun=false`. */
  readonly path: string;
  /** A parsed JSON value, text, bytes, or undefined for none. */
  readonly body?: unknown;
}

/** A replacement fingerprint rule: any text that equal requests share and different ones do not. */
export type RequestFingerprint = (request: FingerprintInput) => string;

/** `value` as JSON with object keys sorted at every depth (canonical: equal values, equal text). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
}

function bodyBytes(body: unknown): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body));
  return Buffer.from(canonicalJson(body), 'utf8');
}

/** The default rule (see the module comment). */
export const defaultRequestFingerprint: RequestFingerprint = (request) =>
  createHash('sha256')
    .update(`${request.method.toUpperCase()}\n${request.path}\n`)
    .update(bodyBytes(request.body))
    .digest('hex');
