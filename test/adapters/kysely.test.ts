/**
 * `evgen-runtime/kysely` on the real PostgreSQL and MariaDB: the shared data-layer contract, plus the
 * compile-time refusal of a plain Kysely instance.
 */
import { Kysely, MysqlDialect, PostgresDialect, type Dialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { kyselyDatabase, kyselyOf, kyselyTransaction } from 'evgen-runtime/kysely';
import { describeDataLayerAdapter } from './support/data-layer-contract.js';

interface ServiceTables {
  orders: { id: string };
  reservation: { order_id: string; sku: string };
}

describeDataLayerAdapter('Kysely', {
  async open(target) {
    const dialect: Dialect =
      target.dialect === 'mariadb'
        ? new MysqlDialect({ pool: createPool({ uri: target.url, connectionLimit: 4 }) })
        : new PostgresDialect({ pool: new pg.Pool({ connectionString: target.url, max: 4 }) });
    const db = new Kysely<ServiceTables>({ dialect });
    return {
      inTransaction: (orderId, write) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('orders').values({ id: orderId }).execute();
          await write(kyselyTransaction(trx));
        }),
      // @ts-expect-error a Kysely instance is not a transaction: refused at compile time
      outsideTransaction: () => kyselyTransaction(db), // eslint-disable-line @typescript-eslint/no-unsafe-class-instance-assignment -- the misuse under test
      database: kyselyDatabase(db),
      async writeEffect(tx, orderId, sku) {
        await kyselyOf<ServiceTables>(tx)
          .insertInto('reservation')
          .values({ order_id: orderId, sku })
          .execute();
      },
      close: () => db.destroy(),
    };
  },
});
