/**
 * `evgen-runtime/drizzle` on the real PostgreSQL (node-postgres) and MariaDB (mysql2): the
 * shared data-layer contract, plus the compile-time refusal of the database object.
 */
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { char, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createPool } from 'mysql2/promise';
import pg from 'pg';
import { drizzleDatabase, drizzleOf, drizzleTransaction } from 'evgen-runtime/drizzle';
import {
  describeDataLayerAdapter,
  type DataLayerTarget,
  type OpenedDataLayer,
} from './support/data-layer-contract.js';

const pgOrders = pgTable('orders', { id: uuid('id').primaryKey() });
const pgReservation = pgTable('reservation', {
  orderId: uuid('order_id').notNull(),
  sku: text('sku').notNull(),
});
const mysqlOrders = mysqlTable('orders', { id: char('id', { length: 36 }).primaryKey() });
const mysqlReservation = mysqlTable('reservation', {
  orderId: char('order_id', { length: 36 }).notNull(),
  sku: varchar('sku', { length: 64 }).notNull(),
});

function openPostgres(target: DataLayerTarget): OpenedDataLayer {
  const pool = new pg.Pool({ connectionString: target.url, max: 4 });
  const db = drizzlePg({ client: pool });
  return {
    inTransaction: (orderId, write) =>
      db.transaction(async (tx) => {
        await tx.insert(pgOrders).values({ id: orderId });
        await write(drizzleTransaction(tx));
      }),
    // @ts-expect-error the database object is not a transaction: refused at compile time
    outsideTransaction: () => drizzleTransaction(db),
    database: drizzleDatabase(db),
    async writeEffect(tx, orderId, sku) {
      await drizzleOf<typeof db>(tx).insert(pgReservation).values({ orderId, sku });
    },
    close: () => pool.end(),
  };
}

function openMariadb(target: DataLayerTarget): OpenedDataLayer {
  const pool = createPool({ uri: target.url, connectionLimit: 4 });
  const db = drizzleMysql({ client: pool });
  return {
    inTransaction: (orderId, write) =>
      db.transaction(async (tx) => {
        await tx.insert(mysqlOrders).values({ id: orderId });
        await write(drizzleTransaction(tx));
      }),
    // @ts-expect-error the database object is not a transaction: refused at compile time
    outsideTransaction: () => drizzleTransaction(db),
    database: drizzleDatabase(db),
    async writeEffect(tx, orderId, sku) {
      await drizzleOf<typeof db>(tx).insert(mysqlReservation).values({ orderId, sku });
    },
    close: () => pool.end(),
  };
}

describeDataLayerAdapter('Drizzle', {
  open: async (target) =>
    target.dialect === 'mariadb' ? openMariadb(target) : openPostgres(target),
});
