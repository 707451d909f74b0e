/**
 * Fastify: a route handler whose work runs under `Idempotency-Key` (see http-idempotency.ts).
 * Typed structurally, so the runtime does not depend on Fastify. Fastify parses JSON bodies
 * itself; the parsed body is part of the fingerprint.
 *
 *     app.post('/orders', idempotentFastify(db, async (tx, { request }) => {
 *       …
 *       return { status: 201, body: { orderId } };
 *     }));
 */
import type { Database, Transaction } from '../db/database.js';
import {
  encodeHttpBody,
  handleIdempotentHttp,
  type HttpIdempotencyOptions,
  type IdempotentHttpResponse,
} from './http-idempotency.js';
import type { IdempotentHandlerContext } from './run-idempotent.js';

/** What the adapter reads of a Fastify request. */
export interface FastifyIdempotentRequestLike {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body?: unknown;
}

/** What the adapter calls on a Fastify reply. */
export interface FastifyIdempotentReplyLike {
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload?: string): unknown;
}

/** The handler of an idempotent Fastify route: its `tx` is the request's transaction. */
export type FastifyIdempotentHandler<Req extends FastifyIdempotentRequestLike> = (
  tx: Transaction,
  context: { readonly request: Req; readonly idempotency: IdempotentHandlerContext | undefined },
) => Promise<IdempotentHttpResponse>;

/** A Fastify route handler; a thrown error goes to Fastify's error handler (a 500). */
export function idempotentFastify<
  Req extends FastifyIdempotentRequestLike,
  Reply extends FastifyIdempotentReplyLike,
>(
  db: Database,
  handler: FastifyIdempotentHandler<Req>,
  options: HttpIdempotencyOptions = {},
): (request: Req, reply: Reply) => Promise<Reply> {
  return async (request, reply) => {
    const response = await handleIdempotentHttp(
      db,
      {
        method: request.method,
        path: request.url,
        body: request.body,
        keyHeader: request.headers['idempotency-key'],
      },
      (tx, idempotency) => handler(tx, { request, idempotency }),
      options,
    );
    const { headers, text } = encodeHttpBody(response);
    reply.code(response.status);
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    reply.send(text);
    return reply;
  };
}
