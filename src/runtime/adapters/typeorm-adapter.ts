/**
 * TypeORM: the outbox row in the EntityManager of `dataSource.transaction()` (or on a QueryRunner
 * that started a transaction), and TypeORM inside the inbox transaction.
 *
 *     await dataSource.transaction(async (manager) => {
 *       await manager.insert(Order, order);
 *       await writeOrderCreatedV2(typeormTransaction(manager), payload);
 *     });
 *
 * `dataSource.manager` has the same type as a transaction's manager, so the refusal of a manager
 * outside a transaction happens at run time.
 */
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { Database, QueryResult, Transaction } from '../db/database.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import {
  OutsideTransactionError,
  libraryDatabase,
  libraryHandleOf,
  libraryTransaction,
} from './library-transaction.js';

const LIBRARY = 'TypeORM';

async function run<R>(
  runner: QueryRunner,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  const result = await runner.query(text, [...params], true);
  const rows = (result.records ?? []) as R[];
  return { rows, rowCount: result.affected ?? rows.length };
}

/** TypeORM's `mysql` and `mariadb` drivers speak evgen's MySQL; any other PostgreSQL. */
function dialectOf(dataSource: DataSource): SqlDialect {
  const type = dataSource.options.type;
  return type === 'mysql' || type === 'mariadb' ? MYSQL_DIALECT : POSTGRES_DIALECT;
}

function isQueryRunner(handle: EntityManager | QueryRunner): handle is QueryRunner {
  return 'isTransactionActive' in handle;
}

/**
 * The EntityManager `dataSource.transaction(async (manager) => …)` hands you, or a QueryRunner
 * after `startTransaction()`, as an evgen Transaction. `dataSource.manager`, a runner without a
 * transaction, and a transaction that already ended are refused with an OutsideTransactionError.
 */
export function typeormTransaction(handle: EntityManager | QueryRunner): Transaction {
  const runner = isQueryRunner(handle) ? handle : handle.queryRunner;
  const refuse = (what: string) =>
    new OutsideTransactionError(
      `typeormTransaction: ${what}, so the event would commit on its own: pass the manager of dataSource.transaction(async (manager) => …) or a QueryRunner after startTransaction()`,
    );
  if (runner === undefined) throw refuse('this EntityManager is not a transaction');
  if (!runner.isTransactionActive || runner.isReleased) {
    throw refuse('this QueryRunner is not in a transaction');
  }
  return libraryTransaction(
    LIBRARY,
    handle,
    (text, params) => run(runner, text, params),
    () => {
      if (!runner.isTransactionActive || runner.isReleased) {
        throw refuse('this transaction already committed or rolled back');
      }
    },
    dialectOf(runner.dataSource),
  );
}

/**
 * An evgen Database whose transactions are TypeORM transactions on `dataSource`: give it to a
 * consumer (`createXConsumer({ db: typeormDatabase(dataSource), … })`) and handlers write with
 * `typeormOf(ctx.tx)` inside the inbox transaction.
 */
export function typeormDatabase(dataSource: DataSource): Database {
  return libraryDatabase({
    library: LIBRARY,
    dialect: dialectOf(dataSource),
    async query(text, params) {
      const runner = dataSource.createQueryRunner();
      try {
        return await run(runner, text, params);
      } finally {
        await runner.release();
      }
    },
    transaction: (work) => dataSource.transaction((manager) => work(typeormTransaction(manager))),
  });
}

/** The EntityManager behind a `tx` opened by {@link typeormDatabase} (e.g. a handler's `ctx.tx`). */
export function typeormOf(tx: Transaction): EntityManager {
  const handle = libraryHandleOf(LIBRARY, 'typeormDatabase', tx) as EntityManager | QueryRunner;
  return isQueryRunner(handle) ? handle.manager : handle;
}
