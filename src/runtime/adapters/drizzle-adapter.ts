/**
 * Drizzle (PostgreSQL): the outbox row in the `tx` of `db.transaction`, and Drizzle inside the
 * inbox transaction.
 *
 *     await db.transaction(async (tx) => {
 *       await tx.insert(orders).values(order);
 *       await writeOrderCreatedV2(drizzleTransaction(tx), payload);
 *     });
 */
import { is, sql, type SQL } from 'drizzle-orm';
import { PgTransaction, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { Database, QueryResult, Transaction } from '../db/database.js';
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
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The `tx` type `database.transaction(…)` hands its callback. */
export type DrizzleTransactionOf<TDatabase extends AnyPgDatabase> = Parameters<
  Parameters<TDatabase['transaction']>[0]
>[0];

/** evgen's statement as a Drizzle SQL object: each `$n` becomes a Drizzle parameter. */
function toSql(text: string, params: readonly unknown[]): SQL {
  const { pieces, parameters } = splitAtParameters(text);
  const chunks: SQL[] = [sql.raw(pieces[0]!)];
  parameters.forEach((index, i) => {
    chunks.push(sql`${params[index]}`, sql.raw(pieces[i + 1]!));
  });
  return sql.join(chunks);
}

/** node-postgres returns `{ rows, rowCount }`, postgres.js an array, PGlite `{ rows, affectedRows }`. */
interface ExecuteResultLike {
  readonly rows?: unknown[];
  readonly rowCount?: number | null;
  readonly affectedRows?: number;
  readonly count?: number;
}

async function run<R>(
  db: AnyPgDatabase,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  const executed: unknown = await db.execute(toSql(text, params));
  const result = executed as ExecuteResultLike;
  const rows = (Array.isArray(result) ? result : (result.rows ?? [])) as R[];
  return { rows, rowCount: result.rowCount ?? result.affectedRows ?? result.count ?? rows.length };
}

/**
 * Drizzle keeps running a finished `tx`'s statements on the connection it released (they would
 * autocommit), so the wrapper asks the node-postgres client underneath whether its transaction
 * is still open, where the driver tells (`getTransactionStatus`, pg ≥ 8.12).
 */
function assertStillOpen(tx: AnyPgTransaction): void {
  const client = (tx as unknown as { session?: { client?: { getTransactionStatus?(): unknown } } })
    .session?.client;
  if (client?.getTransactionStatus?.() === 'I') {
    throw new OutsideTransactionError(
      'drizzleTransaction: this transaction already committed or rolled back, so the event would commit on its own: write inside the db.transaction callback',
    );
  }
}

/**
 * The `tx` of `db.transaction(async (tx) => …)` as an evgen Transaction. Only a Drizzle
 * transaction type-checks; the database object (which would autocommit) is refused at compile
 * time, and at run time from JavaScript.
 */
export function drizzleTransaction(tx: AnyPgTransaction): Transaction {
  if (!is(tx, PgTransaction)) {
    throw new OutsideTransactionError(
      'drizzleTransaction: this Drizzle database is not a transaction, so the event would commit on its own: pass the tx of db.transaction(async (tx) => …)',
    );
  }
  return libraryTransaction(
    LIBRARY,
    tx,
    (text, params) => run(tx, text, params),
    () => assertStillOpen(tx),
  );
}

/**
 * An evgen Database whose transactions are Drizzle transactions on `db`: give it to a consumer
 * (`createXConsumer({ db: drizzleDatabase(db), … })`) and handlers write with
 * `drizzleOf<typeof db>(ctx.tx)` inside the inbox transaction.
 */
export function drizzleDatabase(db: AnyPgDatabase): Database {
  return libraryDatabase({
    library: LIBRARY,
    query: (text, params) => run(db, text, params),
    transaction: (work) => db.transaction((tx) => work(drizzleTransaction(tx))),
  });
}

/** The Drizzle `tx` behind a `tx` opened by {@link drizzleDatabase} (e.g. a handler's `ctx.tx`). */
export function drizzleOf<TDatabase extends AnyPgDatabase>(
  tx: Transaction,
): DrizzleTransactionOf<TDatabase> {
  return libraryHandleOf(LIBRARY, 'drizzleDatabase', tx) as DrizzleTransactionOf<TDatabase>;
}
