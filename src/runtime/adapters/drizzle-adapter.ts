/**
 * Drizzle (`pg-core` and `mysql-core` databases): the outbox row in the `tx` of
 * `db.transaction`, and Drizzle inside the inbox transaction.
 *
 *     await db.transaction(async (tx) => {
 *       await tx.insert(orders).values(order);
 *       await writeOrderCreatedV2(drizzleTransaction(tx), payload);
 *     });
 */
import { DrizzleQueryError, is, sql, type SQL } from 'drizzle-orm';
import {
  MySqlDatabase,
  MySqlTransaction,
  type MySqlQueryResultHKT,
  type PreparedQueryHKTBase,
} from 'drizzle-orm/mysql-core';
import { PgTransaction, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
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

const LIBRARY = 'Drizzle';

// Drizzle's own types take these type parameters as `any` wherever a database of any schema fits.
/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyPgDatabase = PgDatabase<PgQueryResultHKT, any, any>;
type AnyPgTransaction = PgTransaction<PgQueryResultHKT, any, any>;
type AnyMySqlDatabase = MySqlDatabase<MySqlQueryResultHKT, PreparedQueryHKTBase, any, any>;
type AnyMySqlTransaction = MySqlTransaction<MySqlQueryResultHKT, PreparedQueryHKTBase, any, any>;
/* eslint-enable @typescript-eslint/no-explicit-any */
type AnyDrizzleDatabase = AnyPgDatabase | AnyMySqlDatabase;

/** The `tx` type `database.transaction(…)` hands its callback. */
export type DrizzleTransactionOf<TDatabase extends AnyDrizzleDatabase> = Parameters<
  Parameters<TDatabase['transaction']>[0]
>[0];

function dialectOf(db: AnyDrizzleDatabase): SqlDialect {
  return is(db, MySqlDatabase) ? MYSQL_DIALECT : POSTGRES_DIALECT;
}

/** evgen's statement as a Drizzle SQL object: each parameter becomes a Drizzle parameter. */
function toSql(dialect: SqlDialect, text: string, params: readonly unknown[]): SQL {
  const { pieces, parameters } = splitAtParameters(text, dialect.name);
  const chunks: SQL[] = [sql.raw(pieces[0]!)];
  parameters.forEach((index, i) => {
    chunks.push(sql`${params[index]}`, sql.raw(pieces[i + 1]!));
  });
  return sql.join(chunks);
}

/** node-postgres returns `{ rows, rowCount }`, postgres.js an array, PGlite `{ rows, affectedRows }`. */
interface PgExecuteResultLike {
  readonly rows?: unknown[];
  readonly rowCount?: number | null;
  readonly affectedRows?: number;
  readonly count?: number;
}

async function run<R>(
  db: AnyDrizzleDatabase,
  dialect: SqlDialect,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  // The two database classes declare execute() apart; both take a Drizzle SQL object.
  const execute = (query: SQL): Promise<unknown> => (db as AnyPgDatabase).execute(query);
  let executed: unknown;
  try {
    executed = await execute(toSql(dialect, text, params));
  } catch (error) {
    // Drizzle wraps the driver's error; evgen reads the driver's SQLSTATE / errno (a duplicate
    // inbox key on MySQL, what is retryable), so the driver's own error goes on.
    throw error instanceof DrizzleQueryError && error.cause !== undefined ? error.cause : error;
  }
  if (dialect.name === 'mysql') return driverResult<R>(dialect, executed);
  const result = executed as PgExecuteResultLike;
  const rows = (Array.isArray(result) ? result : (result.rows ?? [])) as R[];
  return { rows, rowCount: result.rowCount ?? result.affectedRows ?? result.count ?? rows.length };
}

const ENDED = () =>
  new OutsideTransactionError(
    'drizzleTransaction: this transaction already committed or rolled back, so the event would commit on its own: write inside the db.transaction callback',
  );

/**
 * Drizzle keeps running a finished `tx`'s statements on the connection it released (they would
 * autocommit), so the wrapper asks the node-postgres client underneath whether its transaction
 * is still open, where the driver tells (`getTransactionStatus`, pg ≥ 8.12).
 */
function assertPgStillOpen(tx: AnyDrizzleDatabase): void {
  const client = (tx as unknown as { session?: { client?: { getTransactionStatus?(): unknown } } })
    .session?.client;
  if (client?.getTransactionStatus?.() === 'I') throw ENDED();
}

/**
 * mysql2 keeps no transaction state, so on MySQL each statement is preceded by a look at the
 * server's `@@in_transaction` (one more round trip per statement).
 */
async function runInOpenMysqlTransaction<R>(
  tx: AnyDrizzleDatabase,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  const state = await run<{ open: number | string }>(
    tx,
    MYSQL_DIALECT,
    'SELECT @@in_transaction AS open',
    [],
  );
  if (Number(state.rows[0]?.open) !== 1) throw ENDED();
  return run<R>(tx, MYSQL_DIALECT, text, params);
}

/**
 * The `tx` of `db.transaction(async (tx) => …)` as an evgen Transaction. Only a Drizzle
 * transaction type-checks; the database object (which would autocommit) is refused at compile
 * time, and at run time from JavaScript.
 */
export function drizzleTransaction(tx: AnyPgTransaction | AnyMySqlTransaction): Transaction {
  if (!is(tx, PgTransaction) && !is(tx, MySqlTransaction)) {
    throw new OutsideTransactionError(
      'drizzleTransaction: this Drizzle database is not a transaction, so the event would commit on its own: pass the tx of db.transaction(async (tx) => …)',
    );
  }
  const dialect = dialectOf(tx);
  if (dialect.name === 'mysql') {
    return libraryTransaction(
      LIBRARY,
      tx,
      (text, params) => runInOpenMysqlTransaction(tx, text, params),
      undefined,
      dialect,
    );
  }
  return libraryTransaction(
    LIBRARY,
    tx,
    (text, params) => run(tx, dialect, text, params),
    () => assertPgStillOpen(tx),
    dialect,
  );
}

/**
 * An evgen Database whose transactions are Drizzle transactions on `db`: give it to a consumer
 * (`createXConsumer({ db: drizzleDatabase(db), … })`) and handlers write with
 * `drizzleOf<typeof db>(ctx.tx)` inside the inbox transaction.
 */
export function drizzleDatabase(db: AnyDrizzleDatabase): Database {
  const dialect = dialectOf(db);
  const transaction = (work: (tx: AnyPgTransaction | AnyMySqlTransaction) => Promise<unknown>) =>
    (db as AnyPgDatabase).transaction(work);
  return libraryDatabase({
    library: LIBRARY,
    dialect,
    query: (text, params) => run(db, dialect, text, params),
    transaction: (work) =>
      transaction(async (tx) => {
        if (dialect.name !== 'mysql') return work(drizzleTransaction(tx));
        // Here evgen runs the transaction, so it knows when it ends without asking the server
        // before each statement. Asking would also refuse a migration on MySQL: its DDL commits
        // implicitly, leaving the connection (which holds the migration lock) outside a
        // transaction for the statements after the first.
        let ended = false;
        try {
          return await work(
            libraryTransaction(
              LIBRARY,
              tx,
              (text, params) => run(tx, dialect, text, params),
              () => {
                if (ended) throw ENDED();
              },
              dialect,
            ),
          );
        } finally {
          ended = true;
        }
      }) as ReturnType<typeof work>,
  });
}

/** The Drizzle `tx` behind a `tx` opened by {@link drizzleDatabase} (e.g. a handler's `ctx.tx`). */
export function drizzleOf<TDatabase extends AnyDrizzleDatabase>(
  tx: Transaction,
): DrizzleTransactionOf<TDatabase> {
  return libraryHandleOf(LIBRARY, 'drizzleDatabase', tx) as DrizzleTransactionOf<TDatabase>;
}
