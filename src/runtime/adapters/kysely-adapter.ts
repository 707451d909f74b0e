/**
 * Kysely: the outbox row in a Kysely transaction, and Kysely inside the inbox transaction.
 *
 *     await db.transaction().execute(async (trx) => {
 *       await trx.insertInto('orders').values(order).execute();
 *       await writeOrderCreatedV2(kyselyTransaction(trx), payload);
 *     });
 */
import {
  CompiledQuery,
  MysqlIntrospector,
  type Kysely,
  type Transaction as KyselyTransaction,
} from 'kysely';
import type { Database, QueryResult, Transaction } from '../db/database.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import {
  OutsideTransactionError,
  libraryDatabase,
  libraryHandleOf,
  libraryTransaction,
} from './library-transaction.js';

const LIBRARY = 'Kysely';

async function run<R>(
  kysely: Kysely<unknown>,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  const result = await kysely.executeQuery<R>(CompiledQuery.raw(text, [...params]));
  const rows = [...result.rows];
  return {
    rows,
    rowCount: result.numAffectedRows === undefined ? rows.length : Number(result.numAffectedRows),
  };
}

/** Kysely's MysqlDialect (MySQL, MariaDB) speaks evgen's MySQL; any other dialect PostgreSQL. */
function dialectOf(kysely: Kysely<unknown>): SqlDialect {
  return kysely.introspection instanceof MysqlIntrospector ? MYSQL_DIALECT : POSTGRES_DIALECT;
}

/**
 * The `trx` of `db.transaction().execute(async (trx) => …)` (or a `startTransaction()`) as an
 * evgen Transaction. Only a Kysely `Transaction` type-checks; a plain `Kysely` instance (which
 * would autocommit) is refused at compile time, and at run time from JavaScript.
 */
export function kyselyTransaction<DB>(trx: KyselyTransaction<DB>): Transaction {
  if (!(trx as Kysely<DB>).isTransaction) {
    throw new OutsideTransactionError(
      'kyselyTransaction: this Kysely instance is not a transaction, so the event would commit on its own: pass the trx of db.transaction().execute(async (trx) => …)',
    );
  }
  const kysely = trx as unknown as Kysely<unknown>;
  return libraryTransaction(
    LIBRARY,
    trx,
    (text, params) => run(kysely, text, params),
    undefined,
    dialectOf(kysely),
  );
}

/**
 * An evgen Database whose transactions are Kysely transactions on `db`: give it to a consumer
 * (`createXConsumer({ db: kyselyDatabase(db), … })`) and handlers write with
 * `kyselyOf<DB>(ctx.tx)` inside the inbox transaction.
 */
export function kyselyDatabase<DB>(db: Kysely<DB>): Database {
  const kysely = db as unknown as Kysely<unknown>;
  return libraryDatabase({
    library: LIBRARY,
    dialect: dialectOf(kysely),
    query: (text, params) => run(kysely, text, params),
    transaction: (work) => db.transaction().execute((trx) => work(kyselyTransaction(trx))),
  });
}

/** The Kysely transaction behind a `tx` opened by {@link kyselyDatabase} (e.g. a handler's `ctx.tx`). */
export function kyselyOf<DB>(tx: Transaction): KyselyTransaction<DB> {
  return libraryHandleOf(LIBRARY, 'kyselyDatabase', tx) as KyselyTransaction<DB>;
}
