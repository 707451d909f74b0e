/**
 * HTTP on top of `runIdempotent`, shared by the Express, Fastify and fetch adapters, following
 * the IETF httpapi `Idempotency-Key` header draft for status codes:
 *
 * - key missing where required, or malformed (empty, over 255 characters, not printable ASCII)
 *   → 400, nothing written;
 * - key reused with another request (another fingerprint) → 422;
 * - the key's first request still in flight (after waiting up to `waitMs`) → 409, `Retry-After`;
 * - the key's request completed → its stored response, marked `Idempotent-Replayed: true`.
 *
 * Errors are RFC 9457 problem details (`application/problem+json`).
 *
 * Which responses are stored: every status below 500. A 5xx says the server failed, usually
 * transiently (a deadlock, a dependency down); storing it would make every retry of the key
 * repeat that failure, while the retry is exactly what should get past it. So a 5xx response is
 * not stored and its transaction is rolled back (no business row, no event), and the key is
 * released: the retry executes afresh, still at most once to a committed end. A handler that
 * throws is treated the same way (rolled back, released, rethrown to the framework: a 500).
 * 4xx responses are stored: they are the answer to that payload, and the client must send a
 * new key for a corrected request.
 */
import type { Database, Transaction } from '../db/database.js';
import { IdempotencyKeyError, parseIdempotencyKey } from './idempotency-key.js';
import {
  defaultRequestFingerprint,
  type FingerprintInput,
  type RequestFingerprint,
} from './request-fingerprint.js';
import {
  runIdempotent,
  type IdempotencyOptions,
  type IdempotentHandlerContext,
} from './run-idempotent.js';

/** A response as a handler returns it and as it is stored: the body must survive JSON. */
export interface IdempotentHttpResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A JSON value (sent as `application/json` unless headers say otherwise); absent: no body. */
  readonly body?: unknown;
}

export interface HttpIdempotencyOptions extends IdempotencyOptions {
  /**
   * Refuse a request without the header with 400 (default true). `false`: such a request runs the
   * handler in a plain transaction, nothing stored (key absent: the client opted out).
   */
  readonly required?: boolean;
  /** The fingerprint rule (default: method, path with query, canonical body; see `defaultRequestFingerprint`). */
  readonly fingerprint?: RequestFingerprint;
  /** Link to your documentation of the key, put in every problem response's `type`. */
  readonly problemType?: string;
}

/** The request as the adapters see it. */
export interface HttpRequestParts extends FingerprintInput {
  /** The `Idempotency-Key` header value(s), undefined when absent. */
  readonly keyHeader: string | readonly string[] | undefined;
}

/** What `handleIdempotentHttp` answers with, and whether it came from the store. */
export interface IdempotentHttpResult extends IdempotentHttpResponse {
  /** The stored response of an earlier request with the key. */
  readonly replayed: boolean;
}

/** Header marking a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

function problem(
  options: HttpIdempotencyOptions,
  status: number,
  title: string,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): IdempotentHttpResult {
  return {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: { type: options.problemType ?? 'about:blank', title, status, detail },
    replayed: false,
  };
}

/** One HTTP request through the idempotency core (see the module comment). */
export async function handleIdempotentHttp(
  db: Database,
  request: HttpRequestParts,
  handler: (
    tx: Transaction,
    context: IdempotentHandlerContext | undefined,
  ) => Promise<IdempotentHttpResponse>,
  options: HttpIdempotencyOptions = {},
): Promise<IdempotentHttpResult> {
  if (request.keyHeader === undefined && options.required === false) {
    const response = await db.transaction((tx) => handler(tx, undefined));
    return { ...response, replayed: false };
  }
  let key: string;
  try {
    key = parseIdempotencyKey(request.keyHeader);
  } catch (error) {
    if (!(error instanceof IdempotencyKeyError)) throw error;
    return problem(options, 400, 'Bad Idempotency-Key', error.message);
  }
  const fingerprint = (options.fingerprint ?? defaultRequestFingerprint)(request);
  const outcome = await runIdempotent<IdempotentHttpResponse>(
    db,
    { key, fingerprint },
    (tx, context) => handler(tx, context),
    {
      ...options,
      shouldStore: (response) =>
        (response as IdempotentHttpResponse).status < 500 &&
        (options.shouldStore?.(response) ?? true),
    },
  );
  switch (outcome.kind) {
    case 'fresh':
      return { ...outcome.result, replayed: false };
    case 'replayed':
      return {
        ...outcome.result,
        headers: { ...outcome.result.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
        replayed: true,
      };
    case 'conflict':
      return problem(
        options,
        422,
        'Idempotency-Key reused',
        'this Idempotency-Key was already used with another request (method, path or body): send a new key for a new request',
      );
    case 'in-progress':
      return problem(
        options,
        409,
        'Request in progress',
        'a request with this Idempotency-Key is still being processed: retry later with the same key',
        { 'retry-after': '1' },
      );
  }
}

/** The body as text and its content type, as every adapter sends it. */
export function encodeHttpBody(response: IdempotentHttpResponse): {
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string | undefined;
} {
  const headers = { ...response.headers };
  if (response.body === undefined) return { headers, text: undefined };
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (!hasType) headers['content-type'] = 'application/json';
  return {
    headers,
    text:
      typeof response.body === 'string' && hasType ? response.body : JSON.stringify(response.body),
  };
}
