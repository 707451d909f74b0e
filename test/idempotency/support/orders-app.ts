/**
 * The service the HTTP tests run: `POST /orders` writes an order row and its OrderPlaced event
 * under `Idempotency-Key`, on Express or Fastify, on a real database. Fault hooks let a test
 * slow the handler down or make it answer 503 once.
 */
import express from 'express';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  idempotentExpress,
  idempotentFastify,
  writeOutboxEvent,
  type Database,
  type HttpIdempotencyOptions,
  type IdempotentHttpResponse,
  type Transaction,
} from '../../../src/runtime/index.js';
import { orderPlacedV1 } from '../../outbox/support/test-event.js';

export type Framework = 'express' | 'fastify';
export const FRAMEWORKS: readonly Framework[] = ['express', 'fastify'];

export interface OrdersAppOptions {
  readonly db: Database;
  /** Schema (MariaDB: database) of the orders, outbox and idempotency tables. */
  readonly schema: string;
  readonly idempotency?: Omit<HttpIdempotencyOptions, 'schema'>;
  /** Runs inside the transaction after the writes, before the commit (a slow handler, a crash). */
  readonly beforeCommit?: (written: { readonly messageId: string }) => Promise<void>;
  /**
   * Runs after the transaction committed, before the response leaves (a crash between the two):
   * gets the response body as it would be sent.
   */
  readonly beforeRespond?: (body: string) => Promise<void>;
  /** Called as each business handler execution starts. */
  readonly onExecute?: () => void;
  /** Answer 503 (a transient failure) this many times first. */
  readonly failTimes?: number;
}

export interface RunningApp {
  readonly url: string;
  /** Business handler executions started. */
  readonly executions: () => number;
  close(): Promise<void>;
}

function ordersTable(db: Database, schema: string): string {
  return db.dialect.qualifiedName(schema, 'orders');
}

/** Rows in `table` (a qualified name). */
export async function countRows(db: Database, table: string): Promise<number> {
  const result = await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(result.rows[0]!.n);
}

export async function createOrdersTable(db: Database, schema: string): Promise<void> {
  const key = db.dialect.name === 'mysql' ? 'VARCHAR(64)' : 'text';
  await db.query(
    `CREATE TABLE ${ordersTable(db, schema)} (order_id ${key} PRIMARY KEY, sku ${key} NOT NULL, quantity integer NOT NULL)`,
  );
}

export async function startOrdersApp(
  framework: Framework,
  options: OrdersAppOptions,
): Promise<RunningApp> {
  const { db, schema } = options;
  let executions = 0;
  let failures = options.failTimes ?? 0;
  const placeOrder = async (
    tx: Transaction,
    body: unknown,
    attempt: number,
  ): Promise<IdempotentHttpResponse> => {
    executions++;
    options.onExecute?.();
    const { sku, quantity } = body as { sku: string; quantity: number };
    // The order id is minted per execution, as a service would: only idempotency keeps it single.
    const orderId = `o-${Math.random().toString(36).slice(2, 10)}`;
    await tx.query(
      db.dialect.name === 'mysql'
        ? `INSERT INTO ${ordersTable(db, schema)} (order_id, sku, quantity) VALUES (?, ?, ?)`
        : `INSERT INTO ${ordersTable(db, schema)} (order_id, sku, quantity) VALUES ($1, $2, $3)`,
      [orderId, sku, quantity],
    );
    const event = await writeOutboxEvent(
      tx,
      orderPlacedV1,
      { orderId, amount: quantity },
      {},
      { schema },
    );
    await options.beforeCommit?.({ messageId: event.messageId });
    if (failures > 0) {
      failures--;
      return { status: 503, body: { error: 'inventory service unavailable, try again' } };
    }
    return {
      status: 201,
      headers: { location: `/orders/${orderId}` },
      body: { orderId, messageId: event.messageId, attempt },
    };
  };
  const idempotency = { ...options.idempotency, schema };
  if (framework === 'express') {
    const app = express();
    app.use(express.json());
    const { beforeRespond } = options;
    if (beforeRespond !== undefined)
      app.use((_req, res, next) => {
        // The adapter answers through res.end once runIdempotent has returned (committed).
        const end = res.end.bind(res) as (body?: string) => unknown;
        res.end = ((body?: string) => {
          void beforeRespond(body ?? '').then(() => end(body));
          return res;
        }) as typeof res.end;
        next();
      });
    app.post(
      '/orders',
      idempotentExpress(
        db,
        (tx, { req, idempotency: ctx }) => placeOrder(tx, req.body, ctx?.attempt ?? 1),
        idempotency,
      ),
    );
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      executions: () => executions,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
  const app = Fastify();
  const { beforeRespond } = options;
  if (beforeRespond !== undefined)
    app.addHook('onSend', async (_request, _reply, payload) => {
      await beforeRespond(typeof payload === 'string' ? payload : '');
      return payload;
    });
  app.post(
    '/orders',
    idempotentFastify(
      db,
      (tx, { request, idempotency: ctx }) => placeOrder(tx, request.body, ctx?.attempt ?? 1),
      idempotency,
    ),
  );
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: address, executions: () => executions, close: () => app.close() };
}
