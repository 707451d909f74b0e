/**
 * Fetch-style servers (Hono, Bun, Deno, Next.js route handlers, undici's Request/Response):
 * `(Request) => Promise<Response>` whose work runs under `Idempotency-Key` (see
 * http-idempotency.ts). The body is read once: a JSON content type is parsed (and fingerprinted
 * canonically), anything else is kept as text.
 */
import type { Database, Transaction } from '../db/database.js';
import {
  encodeHttpBody,
  handleIdempotentHttp,
  type HttpIdempotencyOptions,
  type IdempotentHttpResponse,
} from './http-idempotency.js';
import type { IdempotentHandlerContext } from './run-idempotent.js';

/** The handler of an idempotent fetch route: `body` is the parsed JSON (or text) body. */
export type FetchIdempotentHandler = (
  tx: Transaction,
  context: {
    readonly request: Request;
    readonly body: unknown;
    readonly idempotency: IdempotentHandlerContext | undefined;
  },
) => Promise<IdempotentHttpResponse>;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Wraps `handler` as `(Request) => Promise<Response>`; a malformed JSON body is a 400. */
export function idempotentFetch(
  db: Database,
  handler: FetchIdempotentHandler,
  options: HttpIdempotencyOptions = {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const text = await request.text();
    let body: unknown = text === '' ? undefined : text;
    if (text !== '' && JSON_TYPE.test(request.headers.get('content-type') ?? '')) {
      try {
        body = JSON.parse(text);
      } catch (error) {
        return Response.json(
          {
            type: options.problemType ?? 'about:blank',
            title: 'Malformed JSON body',
            status: 400,
            detail: (error as Error).message,
          },
          { status: 400, headers: { 'content-type': 'application/problem+json' } },
        );
      }
    }
    const url = new URL(request.url);
    const response = await handleIdempotentHttp(
      db,
      {
        method: request.method,
        path: `${url.pathname}${url.search}`,
        body,
        keyHeader: request.headers.get('idempotency-key') ?? undefined,
      },
      (tx, idempotency) => handler(tx, { request, body, idempotency }),
      options,
    );
    const encoded = encodeHttpBody(response);
    return new Response(encoded.text ?? null, {
      status: response.status,
      headers: encoded.headers,
    });
  };
}
