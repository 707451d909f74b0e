/**
 * `evgen-runtime/typeorm` on the real PostgreSQL and MariaDB: the shared data-layer contract with the
 * EntityManager of `dataSource.transaction()`, and the same with a QueryRunner.
 */
import { DataSource, EntitySchema, type EntityManager } from 'typeorm';
import { typeormDatabase, typeormOf, typeormTransaction } from 'evgen-runtime/typeorm';
import type { Transaction } from 'evgen-runtime';
import {
  describeDataLayerAdapter,
  type DataLayerTarget,
  type OpenedDataLayer,
} from './support/data-layer-contract.js';

/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment -- TypeORM types its
   EntitySchema options as a class; an object literal is how its documentation passes them */
const Order = new EntitySchema<{ id: string }>({
  name: 'Order',
  tableName: 'orders',
  columns: { id: { type: 'uuid', primary: true } },
});
const Reservation = new EntitySchema<{ orderId: string; sku: string }>({
  name: 'Reservation',
  tableName: 'reservation',
  columns: {
    orderId: { name: 'order_id', type: 'uuid', primary: true },
    sku: { type: 'text' },
  },
});
/* eslint-enable @typescript-eslint/no-unsafe-class-instance-assignment */

async function openTypeorm(
  target: DataLayerTarget,
  inTransaction: OpenedDataLayer['inTransaction'] extends infer F
    ? (dataSource: DataSource) => F
    : never,
): Promise<OpenedDataLayer> {
  const dataSource = new DataSource(
    target.dialect === 'mariadb'
      ? { type: 'mariadb', url: target.url, entities: [Order, Reservation], poolSize: 4 }
      : { type: 'postgres', url: target.url, entities: [Order, Reservation], extra: { max: 4 } },
  );
  await dataSource.initialize();
  return {
    inTransaction: inTransaction(dataSource),
    outsideTransaction: () => typeormTransaction(dataSource.manager),
    database: typeormDatabase(dataSource),
    async writeEffect(tx: Transaction, orderId: string, sku: string) {
      await typeormOf(tx).insert(Reservation, { orderId, sku });
    },
    close: () => dataSource.destroy(),
  };
}

describeDataLayerAdapter('TypeORM (EntityManager)', {
  open: (target) =>
    openTypeorm(
      target,
      (dataSource) => (orderId, write) =>
        dataSource.transaction(async (manager: EntityManager) => {
          await manager.insert(Order, { id: orderId });
          await write(typeormTransaction(manager));
        }),
    ),
});

describeDataLayerAdapter('TypeORM (QueryRunner)', {
  open: (target) =>
    openTypeorm(target, (dataSource) => async (orderId, write) => {
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      try {
        await runner.manager.insert(Order, { id: orderId });
        await write(typeormTransaction(runner));
        await runner.commitTransaction();
      } catch (error) {
        await runner.rollbackTransaction();
        throw error;
      } finally {
        await runner.release();
      }
    }),
});
