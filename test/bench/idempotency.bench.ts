/**
 * The cost of `Idempotency-Key` on a request, over real HTTP (Express on 127.0.0.1) and the real
 * PostgreSQL and MariaDB: `POST /orders` inserting an order row and its outbox event, through
 * `idempotentExpress` vs the same handler in a plain `db.transaction`, rounds of both interleaved
 * in the same run, 8 requests in flight.
 * - fresh: every request a new key (claim INSERT in its own transaction, lock, complete UPDATE:
 *   the extra round trips of the first execution);
 * - replayed: every request a key already completed (one SELECT, no transaction, no writes) vs
 *   the same plain handler doing its writes.
 */
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import {
  idempotentExpress,
  migrateIdempotency,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
  type Transaction,
} from '../../src/runtime/index.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';
import { fromSamples, SAMPLES, SMOKE, type BenchResult } from './bench-result.js';

const REQUESTS = SMOKE ? 40 : 300;
const IN_FLIGHT = 8;

interface Target {
  readonly name: string;
  readonly db: Database;
  readonly schema: string;
  drop(): Promise<void>;
}

async function targets(): Promise<Target[]> {
  const pg = await createTestSchema('evgen_bench_idem');
  const maria = await createMariadbDatabase();
  return [
    {
      name: 'pg',
      db: postgresDatabase(pg.newPool(IN_FLIGHT)),
      schema: pg.schema,
      drop: () => pg.drop(),
    },
    {
      name: 'mariadb',
      db: mysqlDatabase(maria.newPool(IN_FLIGHT)),
      schema: maria.schema,
      drop: () => maria.drop(),
    },
  ];
}

/** `count` POSTs, `IN_FLIGHT` at a time; the `n`-th request's key from `key(n)` (none: no header). */
async function load(
  url: string,
  count: number,
  key: ((n: number) => string) | undefined,
): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const n = next++;
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(key === undefined ? {} : { 'idempotency-key': key(n) }),
          },
          body: JSON.stringify({ sku: 'SKU-1', quantity: 1 }),
        });
        await response.arrayBuffer();
        if (response.status !== 201) throw new Error(`POST answered ${response.status}`);
      }
    }),
  );
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`, server };
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const target of await targets()) {
    const servers: Server[] = [];
    try {
      const { db, schema } = target;
      await migrateOutbox(db, { schema });
      await migrateIdempotency(db, { schema });
      const orders = db.dialect.qualifiedName(schema, 'orders');
      const keyType = db.dialect.name === 'mysql' ? 'VARCHAR(64)' : 'text';
      await db.query(
        `CREATE TABLE ${orders} (order_id ${keyType} PRIMARY KEY, sku ${keyType} NOT NULL, quantity integer NOT NULL)`,
      );
      const insert =
        db.dialect.name === 'mysql'
          ? `INSERT INTO ${orders} (order_id, sku, quantity) VALUES (?, ?, ?)`
          : `INSERT INTO ${orders} (order_id, sku, quantity) VALUES ($1, $2, $3)`;
      /** The business work, identical on both sides. */
      const placeOrder = async (tx: Transaction, body: unknown) => {
        const { sku, quantity } = body as { sku: string; quantity: number };
        const orderId = randomUUID();
        await tx.query(insert, [orderId, sku, quantity]);
        const event = await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId, amount: quantity },
          {},
          {
            schema,
            notifyChannel: false,
          },
        );
        return { status: 201, body: { orderId, messageId: event.messageId } };
      };
      const app = express();
      app.use(express.json());
      app.post(
        '/orders',
        idempotentExpress(db, (tx, { req }) => placeOrder(tx, req.body), { schema }),
      );
      const plainApp = express();
      plainApp.use(express.json());
      plainApp.post('/orders', (req, res, next) => {
        db.transaction((tx) => placeOrder(tx, req.body)).then((response) => {
          res.status(response.status).json(response.body);
        }, next);
      });
      const idempotent = await listen(app);
      const plain = await listen(plainApp);
      servers.push(idempotent.server, plain.server);

      // Warm-up (connections, JIT), then keys to replay.
      await load(plain.url, IN_FLIGHT * 4, undefined);
      await load(idempotent.url, IN_FLIGHT * 4, () => randomUUID());
      const stored = Array.from({ length: 50 }, () => randomUUID());
      await load(idempotent.url, stored.length, (n) => stored[n]!);

      const fresh: number[] = [];
      const replayed: number[] = [];
      const baseline: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        baseline.push(await load(plain.url, REQUESTS, undefined));
        fresh.push(await load(idempotent.url, REQUESTS, () => randomUUID()));
        replayed.push(await load(idempotent.url, REQUESTS, (n) => stored[n % stored.length]!));
      }
      const common = {
        unit: 'requests/s',
        baselineName: 'the same handler without Idempotency-Key',
      };
      results.push(
        fromSamples(
          {
            ...common,
            name: `HTTP POST /orders, new Idempotency-Key each (${target.name})`,
            note: `${IN_FLIGHT} in flight; claim + lock + store result around the same order INSERT + outbox event`,
          },
          fresh,
          baseline,
        ),
        fromSamples(
          {
            ...common,
            name: `HTTP POST /orders, Idempotency-Key replayed (${target.name})`,
            note: `${IN_FLIGHT} in flight; one SELECT answers with the stored response, nothing written`,
          },
          replayed,
          baseline,
        ),
      );
    } finally {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
      await target.drop();
    }
  }
  return results;
}
