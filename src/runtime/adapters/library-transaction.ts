/**
 * What every data-layer adapter (Kysely, Knex, Drizzle, TypeORM, …) shares: evgen's SQL runs
 * through the library's own raw-query call on the library's transaction object, so the outbox
 * row and the business rows share one transaction whatever the service uses to talk to its
 * database. Each adapter supplies only how its library runs one statement and opens a
 * transaction.
 */
import type { Database, QueryResult, Queryable, Transaction } from '../db/database.js';
import { autocommittedQuery, type AutocommittedQuery } from '../db/mysql-autocommit.js';
import { inlineMysqlParameters } from '../db/mysql-literals.js';
import { POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { OutsideTransactionError } from '../errors.js';

export { OutsideTransactionError };

/** Runs one statement of evgen's SQL (`$1`-style parameters) on the library's handle. */
type LibraryQuery = <R>(text: string, params: readonly unknown[]) => Promise<QueryResult<R>>;

/**
 * On MySQL the parameters are written into the statement (mysql-literals.ts: the libraries format
 * them client-side with backslash escapes, which NO_BACKSLASH_ESCAPES turns into an injection), so
 * the library gets a statement without any.
 */
function onDialect(dialect: SqlDialect, query: LibraryQuery): LibraryQuery {
  if (dialect.name !== 'mysql') return query;
  return <R>(text: string, params: readonly unknown[]) =>
    query<R>(inlineMysqlParameters(text, params), []);
}

/** The library's transaction object behind each Transaction an adapter made, by library. */
const origins = new WeakMap<Transaction, { readonly library: string; readonly handle: unknown }>();

/**
 * Wraps `query` (bound to the library's transaction `handle`) as an evgen Transaction.
 * `assertOpen` runs before every statement, so a transaction that already ended is refused
 * with a clear error instead of the write running on its own.
 */
export function libraryTransaction(
  library: string,
  handle: object,
  query: LibraryQuery,
  assertOpen: () => void = () => undefined,
  dialect: SqlDialect = POSTGRES_DIALECT,
): Transaction {
  const run = onDialect(dialect, query);
  const queryable: Queryable = {
    dialect,
    query<R>(text: string, params: readonly unknown[] = []) {
      assertOpen();
      return run<R>(text, params);
    },
  };
  const tx = queryable as Transaction;
  origins.set(tx, { library, handle });
  return tx;
}

/**
 * The library's transaction object behind `tx`, for a handler that writes its effect with the
 * service's own query builder inside the inbox transaction. Throws when `tx` was not made by
 * this library's adapter (e.g. the consumer runs on `postgresDatabase(pool)` instead of the
 * library's `…Database`).
 */
export function libraryHandleOf(
  library: string,
  databaseFactory: string,
  tx: Transaction,
): unknown {
  const origin = origins.get(tx);
  if (origin === undefined || origin.library !== library) {
    throw new TypeError(
      `this transaction was not opened by ${library}: give the consumer (or whatever opened it) ${databaseFactory}(…) as its db, so handlers can write through ${library} in the same transaction`,
    );
  }
  return origin.handle;
}

interface LibraryDatabaseOptions {
  readonly library: string;
  /** The SQL the library's connection speaks (default PostgreSQL). */
  readonly dialect?: SqlDialect;
  /** Runs one statement outside any transaction (the library's pool decides the connection). */
  readonly query: LibraryQuery;
  /** Opens a transaction through the library, hands it to `work` wrapped as a Transaction. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
}

/**
 * An evgen Database whose transactions are the library's: the inbox guard's row, a handler's
 * writes and anything else evgen does run on the service's own connections. LISTEN needs a
 * dedicated `pg` connection the libraries do not hand out, so `listen` rejects and a relay on
 * this Database polls (give a relay `postgresDatabase(pool)` to be woken on commit).
 */
export function libraryDatabase(options: LibraryDatabaseOptions): Database {
  const dialect = options.dialect ?? POSTGRES_DIALECT;
  const run = onDialect(dialect, options.query);
  // MySQL: committed even where sessions start with autocommit = 0 (mysql-autocommit.ts).
  const query: AutocommittedQuery =
    dialect.name === 'mysql'
      ? autocommittedQuery(
          (text, params = []) => run(text, params),
          (work) => options.transaction(work),
        )
      : (text, params = []) => run(text, params);
  return {
    kind: dialect.name === 'mysql' ? 'mysql' : 'postgres',
    dialect,
    query: (text, params = []) => query(text, params),
    transaction: (work) => options.transaction(work),
    listen: () =>
      Promise.reject(
        new Error(
          `LISTEN is not available through ${options.library}: the relay polls instead (give it postgresDatabase(pool) to be woken on commit)`,
        ),
      ),
  };
}
