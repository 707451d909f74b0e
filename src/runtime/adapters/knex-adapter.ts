/**
 * Knex: the outbox row in a `Knex.Transaction`, and Knex inside the inbox transaction.
 *
 *     await knex.transaction(async (trx) => {
 *       await trx('orders').insert(order);
 *       await writeOrderCreatedV2(knexTransaction(trx), payload);
 *     });
 */
import type { Knex } from 'knex';
import type { Database, QueryResult, Transaction } from '../db/database.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { driverResult } from './driver-result.js';
import {
  OutsideTransactionError,
  libraryDatabase,
  libraryHandleOf,
  libraryTransaction,
} from './library-transaction.js';
import { splitAtParameters } from './positional-parameters.js';

const LIBRARY = 'Knex';

/** Knex's MySQL clients (mysql, mysql2) speak evgen's MySQL; any other PostgreSQL. */
function dialectOf(knex: Knex): SqlDialect {
  return (knex.client as { dialect?: string }).dialect === 'mysql'
    ? MYSQL_DIALECT
    : POSTGRES_DIALECT;
}

/**
 * Knex's raw() takes `?` placeholders: evgen's parameters become `?` in order of occurrence (a
 * repeated `$n` repeats its value), any other `?` is escaped.
 */
async function run<R>(
  knex: Knex,
  dialect: SqlDialect,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  const { pieces, parameters } = splitAtParameters(text, dialect.name);
  const sql = pieces.map((piece) => piece.replaceAll('?', '\\?')).join('?');
  const bindings = parameters.map((index) => params[index]) as Knex.RawBinding[];
  return driverResult<R>(dialect, await knex.raw<unknown>(sql, bindings));
}

/**
 * The `trx` of `knex.transaction(async (trx) => …)` (or of a transaction provider) as an evgen
 * Transaction. Only a `Knex.Transaction` type-checks; the `knex` instance (which would
 * autocommit) is refused at compile time, at run time from JavaScript, and so is a transaction
 * that already committed or rolled back.
 */
export function knexTransaction(trx: Knex.Transaction): Transaction {
  const candidate = trx as Partial<Knex.Transaction>;
  if (
    typeof candidate.isCompleted !== 'function' ||
    !(trx as { isTransaction?: boolean }).isTransaction
  ) {
    throw new OutsideTransactionError(
      'knexTransaction: this knex instance is not a transaction, so the event would commit on its own: pass the trx of knex.transaction(async (trx) => …)',
    );
  }
  const dialect = dialectOf(trx);
  return libraryTransaction(
    LIBRARY,
    trx,
    (text, params) => run(trx, dialect, text, params),
    () => {
      if (trx.isCompleted()) {
        throw new OutsideTransactionError(
          'knexTransaction: this transaction already committed or rolled back, so the event would commit on its own: write inside the transaction callback',
        );
      }
    },
    dialect,
  );
}

/**
 * An evgen Database whose transactions are Knex transactions on `knex`: give it to a consumer
 * (`createXConsumer({ db: knexDatabase(knex), … })`) and handlers write with `knexOf(ctx.tx)`
 * inside the inbox transaction.
 */
export function knexDatabase(knex: Knex): Database {
  const dialect = dialectOf(knex);
  return libraryDatabase({
    library: LIBRARY,
    dialect,
    query: (text, params) => run(knex, dialect, text, params),
    transaction: (work) => knex.transaction((trx) => work(knexTransaction(trx))),
  });
}

/** The Knex transaction behind a `tx` opened by {@link knexDatabase} (e.g. a handler's `ctx.tx`). */
export function knexOf(tx: Transaction): Knex.Transaction {
  return libraryHandleOf(LIBRARY, 'knexDatabase', tx) as Knex.Transaction;
}
