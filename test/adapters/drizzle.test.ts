/**
 * `evgen-runtime/drizzle` on the real PostgreSQL (node-postgres driver): the shared data-layer
 * contract, plus the compile-time refusal of the database object.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { drizzleDatabase, drizzleOf, drizzleTransaction } from 'evgen-runtime/drizzle';
import { describeDataLayerAdapter } from './support/data-layer-contract.js';

const orders = pgTable('orders', { id: uuid('id').primaryKey() });
const reservation = pgTable('reservation', {
  orderId: uuid('order_id').notNull(),
  sku: text('sku').notNull(),
});

describeDataLayerAdapter('Drizzle', {
  async open(target) {
    const pool = target.newPool(4);
    const db = drizzle({ client: pool });
    return {
      inTransaction: (orderId, write) =>
        db.transaction(async (tx) => {
          await tx.insert(orders).values({ id: orderId });
          await write(drizzleTransaction(tx));
        }),
      // @ts-expect-error the database object is not a transaction: refused at compile time
      outsideTransaction: () => drizzleTransaction(db), // eslint-disable-line @typescript-eslint/no-unsafe-class-instance-assignment -- the misuse under test
      database: drizzleDatabase(db),
      async writeEffect(tx, orderId, sku) {
        await drizzleOf<typeof db>(tx).insert(reservation).values({ orderId, sku });
      },
      close: () => pool.end(),
    };
  },
});
