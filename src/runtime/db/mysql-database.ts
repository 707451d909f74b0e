/**
 * The Database adapter for MySQL 8 and MariaDB over a mysql2 promise pool (`mysql2/promise`).
 *
 * Statements use `?` bind parameters, an array parameter expanding to a list (`id IN (?)`), as in
 * mysql2; evgen writes them into the text itself (mysql-literals.ts says why) and sends the
 * statement without parameters. MySQL has no LISTEN/NOTIFY: `listen` subscribes to wake-ups
 * from this process only (a writer's transaction run through `transaction()` wakes them after
 * its commit); relays in other processes find the rows by polling.
 */
import {
  brandTransaction,
  type Database,
  type QueryResult,
  type Queryable,
  type Transaction,
} from './database.js';
import { OutsideTransactionError } from '../errors.js';
import { listenLocally } from './local-notify.js';
import { autocommittedQuery } from './mysql-autocommit.js';
import { inlineMysqlParameters } from './mysql-literals.js';
import { MYSQL_DIALECT } from './sql-dialect.js';
import { checkIdentifier } from './sql-identifier.js';

// Structural types, so the runtime needs mysql2 loaded only when the caller uses it.
/** `[rows, fields]` for a SELECT, `[ResultSetHeader, undefined]` for a write. */
type MysqlQueryResultLike = [unknown, unknown];
export interface MysqlConnectionLike {
  query(sql: string, values?: unknown): Promise<MysqlQueryResultLike>;
}
interface MysqlPoolConnectionLike extends MysqlConnectionLike {
  release(): void;
  /** Closes the connection instead of returning it to the pool (after a failed rollback). */
  destroy(): void;
}
export interface MysqlPoolLike extends MysqlConnectionLike {
  getConnection(): Promise<MysqlPoolConnectionLike>;
}

function fromMysqlResult<R>([result]: MysqlQueryResultLike): QueryResult<R> {
  if (Array.isArray(result)) return { rows: result as R[], rowCount: result.length };
  const header = result as { affectedRows?: number };
  return { rows: [], rowCount: header.affectedRows ?? 0 };
}

function mysqlQueryable(connection: MysqlConnectionLike): Queryable {
  return {
    dialect: MYSQL_DIALECT,
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromMysqlResult<R>(await connection.query(inlineMysqlParameters(text, params)));
    },
  };
}

/**
 * Wraps a mysql2 connection on which the caller has already started a transaction. evgen issues
 * no START TRANSACTION/COMMIT on it: the caller's transaction decides what commits. There is no
 * commit hook, so relays in this process are not woken at once: they find the rows by polling.
 * mysql2 keeps no transaction state, so each statement is preceded by a look at the server's
 * `@@in_transaction` (one more round trip): outside a transaction it is refused.
 */
export function mysqlTransaction(connection: MysqlConnectionLike): Transaction {
  const queryable = mysqlQueryable(connection);
  return brandTransaction({
    dialect: MYSQL_DIALECT,
    async query<R>(text: string, params?: readonly unknown[]) {
      const state = await queryable.query<{ open: unknown }>('SELECT @@in_transaction AS open');
      if (Number(state.rows[0]?.open) !== 1) {
        throw new OutsideTransactionError(
          'mysqlTransaction: this connection is not inside a transaction, so the write would commit on its own: call beginTransaction() (or START TRANSACTION) first, and write before commit()',
        );
      }
      return queryable.query<R>(text, params);
    },
  });
}

/**
 * A Database over a mysql2 promise pool. Each transaction takes its own connection; a
 * connection whose rollback failed is destroyed instead of going back to the pool. A statement
 * outside a transaction commits on its own even where the server's sessions start with
 * `autocommit = 0`. Give the pool
 * `supportBigNumbers: true, bigNumberStrings: true` if you read BIGINT columns yourself (evgen's
 * statements cast them to text).
 */
export function mysqlDatabase(pool: MysqlPoolLike): Database {
  const queryable = mysqlQueryable(pool);
  const query = autocommittedQuery(
    (text, params) => queryable.query(text, params),
    (work) => database.transaction(work),
  );
  const database: Database = {
    kind: 'mysql',
    dialect: MYSQL_DIALECT,
    query: <R>(text: string, params?: readonly unknown[]) => query<R>(text, params),
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const connection = await pool.getConnection();
      let broken = false;
      const committed: (() => void)[] = [];
      try {
        // READ COMMITTED, as on PostgreSQL: no gap locks blocking writers of new rows while a
        // relay claims, and each statement sees what has committed.
        await connection.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
        await connection.query('START TRANSACTION');
        try {
          const result = await work(
            brandTransaction({
              ...mysqlQueryable(connection),
              afterCommit: (callback) => committed.push(callback),
            }),
          );
          await connection.query('COMMIT');
          for (const callback of committed) {
            try {
              callback();
            } catch {
              // The transaction has committed; a hook's failure must not make it look failed.
            }
          }
          return result;
        } catch (error) {
          try {
            await connection.query('ROLLBACK');
          } catch {
            broken = true;
          }
          throw error;
        }
      } finally {
        if (broken) connection.destroy();
        else connection.release();
      }
    },
    async listen(channel, onNotify) {
      checkIdentifier(channel);
      const unsubscribe = listenLocally(channel, onNotify);
      return async () => unsubscribe();
    },
  };
  return database;
}
