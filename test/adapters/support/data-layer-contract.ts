/**
 * One test body for every data-layer adapter (Kysely, Knex, Drizzle, TypeORM, Prisma), run
 * against the real servers, on each dialect the adapter supports: the outbox row commits and
 * rolls back with the business row written through the library, a handle that is not a
 * transaction is refused, and a handler's effect written through the library commits and rolls
 * back with the inbox row.
 *
 * Each test gets its own schema (PostgreSQL) or database (MariaDB) holding a migrated outbox and
 * inbox, an `orders` business table and a `reservation` table for handler effects; the library
 * connects to it through `target.url`.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OutsideTransactionError,
  migrateInbox,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  type Database,
  type Transaction,
} from 'evgen-runtime';
import { orderCreatedV2 } from '../../../generated/index.js';
import {
  createInventoryServiceConsumer,
  type InventoryServiceHandlers,
} from '../../../generated/consumers/inventory-service.js';
import { writeOrderCreatedV2 } from '../../../generated/order/order-created/outbox.js';
import type { OrderCreatedV2Payload } from '../../../generated/order/order-created/types.js';
import { createMariadbDatabase } from '../../support/mariadb.js';
import { createTestSchema } from '../../support/postgres.js';

export type DataLayerDialect = 'postgres' | 'mariadb';

/** Dialects on which evgen's inbox runs (the inbox tests of the contract run there). */
const INBOX_DIALECTS: readonly DataLayerDialect[] = ['postgres', 'mariadb'];

/** Where a library under test connects. */
export interface DataLayerTarget {
  readonly dialect: DataLayerDialect;
  /** The test's PostgreSQL schema or MariaDB database. */
  readonly schema: string;
  /**
   * `postgres://…?options=-c search_path=<schema>` or `mysql://root@…/<database>`: the library
   * opens (and closes) its own pool on it.
   */
  readonly url: string;
}

/** A library opened on a target, as the adapter's user would hold it. */
export interface OpenedDataLayer {
  /**
   * Opens the library's own transaction, inserts `orderId` into `orders` through the library,
   * then calls `write` with the adapter's Transaction made from the library's transaction object.
   */
  inTransaction(orderId: string, write: (tx: Transaction) => Promise<void>): Promise<void>;
  /**
   * Calls the adapter with the library's non-transaction handle (a pool, an instance, a
   * connection without BEGIN); the adapter refuses it at once or at the first statement.
   */
  outsideTransaction(): Transaction;
  /** evgen's Database over the library (its transactions are the library's), for the consumer. */
  readonly database?: Database;
  /** Inserts a `reservation` row through the library on the transaction behind a handler's ctx.tx. */
  writeEffect?(tx: Transaction, orderId: string, sku: string): Promise<void>;
  close(): Promise<void>;
}

export interface DataLayerAdapterUnderTest {
  open(target: DataLayerTarget): Promise<OpenedDataLayer>;
  /** `false` for raw-driver adapters, whose inbox side is evgen's own Database and `ctx.tx`. */
  readonly inbox?: boolean;
}

/** The test's store, migrated, with the business tables; `admin` reads it directly. */
interface TestStore {
  readonly target: DataLayerTarget;
  readonly admin: Database;
  /** The n-th (1-based) bind parameter in the dialect's SQL. */
  readonly param: (n: number) => string;
  drop(): Promise<void>;
}

async function createTestStore(dialect: DataLayerDialect): Promise<TestStore> {
  if (dialect === 'mariadb') {
    const test = await createMariadbDatabase('evgen_datalayer');
    const admin = mysqlDatabase(test.pool);
    await migrateOutbox(admin);
    await migrateInbox(admin);
    await admin.query('CREATE TABLE orders (id char(36) PRIMARY KEY)');
    await admin.query(
      'CREATE TABLE reservation (order_id char(36) NOT NULL, sku varchar(64) NOT NULL)',
    );
    return {
      target: { dialect, schema: test.schema, url: test.url },
      admin,
      param: () => '?',
      drop: () => test.drop(),
    };
  }
  const test = await createTestSchema('evgen_datalayer');
  const admin = postgresDatabase(test.pool);
  await migrateOutbox(admin);
  await migrateInbox(admin);
  await admin.query('CREATE TABLE orders (id uuid PRIMARY KEY)');
  await admin.query('CREATE TABLE reservation (order_id uuid NOT NULL, sku text NOT NULL)');
  const url = new URL(test.pool.options.connectionString!);
  url.searchParams.set('options', `-c search_path=${test.schema}`);
  return {
    target: { dialect, schema: test.schema, url: url.toString() },
    admin,
    param: (n) => `$${n}`,
    drop: () => test.drop(),
  };
}

function orderPayload(orderId: string): OrderCreatedV2Payload {
  return {
    orderId,
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: { amountMinor: 500, currency: 'EUR' } }],
    total: { amountMinor: 1000, currency: 'EUR' },
    shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
  };
}

class HandlerFailure extends Error {}

export function describeDataLayerAdapter(
  name: string,
  adapter: DataLayerAdapterUnderTest,
  dialects: readonly DataLayerDialect[] = ['postgres', 'mariadb'],
): void {
  describe.each(dialects)(`${name} adapter on %s`, (dialect) => {
    let store: TestStore;
    let admin: Database;
    let opened: OpenedDataLayer;
    let p: (n: number) => string;

    beforeEach(async () => {
      store = await createTestStore(dialect);
      admin = store.admin;
      p = store.param;
      opened = await adapter.open(store.target);
    });
    afterEach(async () => {
      await opened?.close();
      await store?.drop();
    });

    const count = async (sql: string, params: unknown[] = []) =>
      Number((await admin.query<{ n: string }>(sql, params)).rows[0]!.n);

    it('commits the outbox row with the business row written through the library', async () => {
      const orderId = randomUUID();
      let messageId = '';
      await opened.inTransaction(orderId, async (tx) => {
        messageId = (await writeOrderCreatedV2(tx, orderPayload(orderId))).messageId;
      });
      expect(await count(`SELECT count(*) AS n FROM orders WHERE id = ${p(1)}`, [orderId])).toBe(1);
      const { rows } = await admin.query<{ status: string; aggregate_id: string }>(
        `SELECT status, aggregate_id FROM outbox_event WHERE event_id = ${p(1)}`,
        [messageId],
      );
      expect(rows).toEqual([{ status: 'READY', aggregate_id: orderId }]);
    });

    it('rolls the outbox row back with the business row', async () => {
      const orderId = randomUUID();
      const failure = new Error('business rule broken after the write');
      await expect(
        opened.inTransaction(orderId, async (tx) => {
          await writeOrderCreatedV2(tx, orderPayload(orderId));
          expect(await count('SELECT count(*) AS n FROM outbox_event')).toBe(0); // not yet committed
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await count('SELECT count(*) AS n FROM orders')).toBe(0);
      expect(await count('SELECT count(*) AS n FROM outbox_event')).toBe(0);
    });

    it('refuses a handle that is not a transaction, before anything is written', async () => {
      const attempt = async () =>
        writeOrderCreatedV2(opened.outsideTransaction(), orderPayload(randomUUID()));
      await expect(attempt()).rejects.toThrow(OutsideTransactionError);
      await expect(attempt()).rejects.toThrow(/not a transaction|not inside a transaction/);
      expect(await count('SELECT count(*) AS n FROM outbox_event')).toBe(0);
    });

    it("rejects a failing statement with the driver's error, its SQLSTATE or errno kept", async () => {
      const failing = opened.inTransaction(randomUUID(), async (tx) => {
        await tx.query('SELECT missing_column FROM orders');
      });
      await expect(failing).rejects.toMatchObject(
        dialect === 'mariadb' ? { errno: 1054 } : { code: '42703' },
      );
    });

    it('refuses a write through a transaction that already ended, writing nothing', async () => {
      let ended: Transaction | undefined;
      await opened.inTransaction(randomUUID(), async (tx) => {
        ended = tx;
      });
      await expect(writeOrderCreatedV2(ended!, orderPayload(randomUUID()))).rejects.toThrow();
      expect(await count('SELECT count(*) AS n FROM outbox_event')).toBe(0);
    });

    // Registered only where evgen's inbox runs (no skipped tests elsewhere).
    if (adapter.inbox === false || !INBOX_DIALECTS.includes(dialect)) return;

    it("migrates the outbox and inbox through the library's Database, idempotently", async () => {
      // Other table names than the store's, so the tables exist only if this migration made them.
      const outbox = { table: 'library_outbox' };
      const inbox = { table: 'library_inbox', orderingTable: 'library_inbox_version' };
      for (let run = 0; run < 2; run++) {
        await migrateOutbox(opened.database!, outbox);
        await migrateInbox(opened.database!, inbox);
      }
      for (const table of ['library_outbox', 'library_inbox', 'library_inbox_version']) {
        expect(await count(`SELECT count(*) AS n FROM ${table}`)).toBe(0);
      }
      await admin.query(
        `INSERT INTO library_inbox (message_id, consumer, received_at) VALUES (${p(1)}, ${p(2)}, ${
          dialect === 'mariadb' ? 'UTC_TIMESTAMP(3)' : 'now()'
        })`,
        ['m-1', 'c-1'],
      );
      expect(await count('SELECT count(*) AS n FROM library_inbox')).toBe(1);
    });
    describe('inbox: a handler writes its effect through the library in the inbox transaction', () => {
      let fail: boolean;
      const handlers: InventoryServiceHandlers = {
        'order.OrderCancelled': { 1: async () => undefined },
        'order.OrderCreated': {
          2: async (envelope, ctx) => {
            await opened.writeEffect!(
              ctx.tx,
              envelope.payload.orderId,
              envelope.payload.lines[0]!.sku,
            );
            if (fail)
              throw new HandlerFailure('stock service said no after the effect was written');
          },
        },
      };
      beforeEach(() => {
        fail = false;
      });

      it('commits the effect with the inbox row; a redelivery is a duplicate with no second effect', async () => {
        const consumer = createInventoryServiceConsumer({ db: opened.database!, handlers });
        const orderId = randomUUID();
        const raw = Buffer.from(JSON.stringify(orderCreatedV2(orderPayload(orderId))));
        await expect(consumer.handle(raw)).resolves.toBe('handled');
        await expect(consumer.handle(raw)).resolves.toBe('duplicate');
        expect(
          await count(
            `SELECT count(*) AS n FROM reservation WHERE order_id = ${p(1)} AND sku = ${p(2)}`,
            [orderId, 'SKU-1'],
          ),
        ).toBe(1);
        expect(
          await count(
            `SELECT count(*) AS n FROM inbox_message WHERE consumer = ${p(1)} AND processed_at IS NOT NULL`,
            ['inventory-service'],
          ),
        ).toBe(1);
      });

      it('rolls the effect back with the inbox row, so a retry handles the message', async () => {
        const consumer = createInventoryServiceConsumer({ db: opened.database!, handlers });
        const orderId = randomUUID();
        const raw = Buffer.from(JSON.stringify(orderCreatedV2(orderPayload(orderId))));
        fail = true;
        const error: unknown = await consumer.handle(raw).catch((caught: unknown) => caught);
        expect((error as Error).cause).toBeInstanceOf(HandlerFailure);
        expect(await count('SELECT count(*) AS n FROM reservation')).toBe(0);
        expect(await count('SELECT count(*) AS n FROM inbox_message')).toBe(0);
        fail = false;
        await expect(consumer.handle(raw)).resolves.toBe('handled');
        expect(await count('SELECT count(*) AS n FROM reservation')).toBe(1);
      });

      it('refuses a ctx.tx the library did not open, naming the Database to use', async () => {
        const consumer = createInventoryServiceConsumer({ db: admin, handlers });
        const raw = Buffer.from(JSON.stringify(orderCreatedV2(orderPayload(randomUUID()))));
        const error: unknown = await consumer.handle(raw).catch((caught: unknown) => caught);
        expect(String((error as Error).cause)).toMatch(
          /was not opened by .*Database\(…\) as its db/,
        );
        expect(await count('SELECT count(*) AS n FROM inbox_message')).toBe(0);
      });
    });
  });
}
