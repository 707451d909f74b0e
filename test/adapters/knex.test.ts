/**
 * `evgen-runtime/knex` on the real PostgreSQL and MariaDB: the shared data-layer contract, plus the
 * compile-time refusal of the knex instance.
 */
import knexFactory from 'knex';
import { knexDatabase, knexOf, knexTransaction } from 'evgen-runtime/knex';
import { describeDataLayerAdapter } from './support/data-layer-contract.js';

describeDataLayerAdapter('Knex', {
  async open(target) {
    const knex = knexFactory({
      client: target.dialect === 'mariadb' ? 'mysql2' : 'pg',
      connection: target.url,
      pool: { min: 0, max: 4 },
    });
    return {
      inTransaction: (orderId, write) =>
        knex.transaction(async (trx) => {
          await trx('orders').insert({ id: orderId });
          await write(knexTransaction(trx));
        }),
      // @ts-expect-error the knex instance is not a transaction: refused at compile time
      outsideTransaction: () => knexTransaction(knex),
      database: knexDatabase(knex),
      async writeEffect(tx, orderId, sku) {
        await knexOf(tx)('reservation').insert({ order_id: orderId, sku });
      },
      close: () => knex.destroy(),
    };
  },
});
