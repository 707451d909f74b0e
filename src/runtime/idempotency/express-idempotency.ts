/**
 * Express: a route handler whose work runs under `Idempotency-Key` (see http-idempotency.ts).
 * Typed structurally, so the runtime does not depend on Express. Mount it after a JSON body
 * parser (`express.json()`): the parsed body is part of the fingerprint.
 *
 *     app.post('/orders', idempotentExpress(db, async (tx, { req }) => {
 *       await tx.query('INSERT INTO orders …', […]);
 *       await writeOrderCreatedV1(tx, payload);
 *       return { status: 201, body: { orderId } };
 *     }, { waitMs: 5_000 }));
 */
import type { Database, Transaction } from '../db/database.js';
import {
  encodeHttpBody,
  handleIdempotentHttp,
  type HttpIdempotencyOptions,
  type IdempotentHttpResponse,
} from './http-idempotency.js';
import type { IdempotentHandlerContext } from './run-idempotent.js';

/** What the adapter reads of an Express request. */
export interface ExpressIdempotentRequestLike {
  readonly method: string;
  /** Path and query as received (Express's `originalUrl`). */
  readonly originalUrl: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body?: unknown;
}

/** What the adapter calls on an Express response. */
export interface ExpressIdempotentResponseLike {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** The handler of an idempotent Express route: its `tx` is the request's transaction. */
export type ExpressIdempotentHandler<Req extends ExpressIdempotentRequestLike> = (
  tx: Transaction,
  context: { readonly req: Req; readonly idempotency: IdempotentHandlerContext | undefined },
) => Promise<IdempotentHttpResponse>;

/** An Express route handler `(req, res, next)`; errors go to `next` (the app's error handler: a 500). */
export function idempotentExpress<Req extends ExpressIdempotentRequestLike>(
  db: Database,
  handler: ExpressIdempotentHandler<Req>,
  options: HttpIdempotencyOptions = {},
): (req: Req, res: ExpressIdempotentResponseLike, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    handleIdempotentHttp(
      db,
      {
        method: req.method,
        path: req.originalUrl,
        body: req.body,
        keyHeader: req.headers['idempotency-key'],
      },
      (tx, idempotency) => handler(tx, { req, idempotency }),
      options,
    ).then((response) => {
      const { headers, text } = encodeHttpBody(response);
      res.status(response.status);
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.end(text);
    }, next);
  };
}
