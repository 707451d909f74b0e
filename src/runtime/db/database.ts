/**
 * The one database abstraction the runtime uses, with adapters for node-postgres and PGlite.
 *
 * A `Transaction` can only be obtained from `Database.transaction()` or by wrapping a client the
 * caller already opened a transaction on; writers, guards and handlers take a `Transaction`, so
 * the type system refuses a call made outside one.
 */
import { quoteIdentifier } from './sql-identifier.js';

export interface QueryResult<R> {
  readonly rows: R[];
  /** Rows returned by a SELECT or changed by INSERT/UPDATE/DELETE. */
  readonly rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<R>>;
}

declare const transactionBrand: unique symbol;

/** A handle on an open database transaction. Only evgen's adapters create one. */
export interface Transaction extends Queryable {
  readonly [transactionBrand]: true;
}

export interface Database extends Queryable {
  /** `postgres` is a server reached through a pool; `pglite` is one embedded session. */
  readonly kind: 'postgres' | 'pglite';
  /** Runs `work` in a transaction: commits when it resolves, rolls back and rethrows when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Subscribes to NOTIFY on `channel`; resolves to a function that unsubscribes. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

// Structural types so the runtime needs neither `pg` nor PGlite loaded unless the caller uses it.
interface PgQueryResultLike {
  rows: unknown[];
  rowCount: number | null;
}
export interface PgClientLike {
  query(text: string, params?: unknown[]): Promise<PgQueryResultLike>;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  removeListener(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
}
export interface PgPoolClientLike extends PgClientLike {
  release(destroy?: boolean | Error): void;
}
export interface PgPoolLike {
  connect(): Promise<PgPoolClientLike>;
  query(text: string, params?: unknown[]): Promise<PgQueryResultLike>;
}
interface PgliteResultsLike {
  rows: unknown[];
  affectedRows?: number;
}
export interface PgliteTransactionLike {
  query(text: string, params?: unknown[]): Promise<PgliteResultsLike>;
}
export interface PgliteLike extends PgliteTransactionLike {
  transaction<T>(callback: (tx: PgliteTransactionLike) => Promise<T>): Promise<T>;
  listen(
    channel: string,
    callback: (payload: string) => void,
  ): Promise<(tx?: never) => Promise<void>>;
}

function fromPgResult<R>(result: PgQueryResultLike): QueryResult<R> {
  return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
}

function fromPgliteResult<R>(result: PgliteResultsLike): QueryResult<R> {
  return { rows: result.rows as R[], rowCount: result.affectedRows || result.rows.length };
}

function brand(queryable: Queryable): Transaction {
  return queryable as Transaction;
}

/**
 * Wraps a node-postgres client on which the caller has already run BEGIN. evgen issues no
 * BEGIN/COMMIT on it: the caller's transaction decides what commits.
 */
export function pgTransaction(client: PgClientLike): Transaction {
  return brand({
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromPgResult<R>(await client.query(text, params as unknown[] | undefined));
    },
  });
}

/** Wraps the `tx` that PGlite's own `transaction()` passes to its callback. */
export function pgliteTransaction(tx: PgliteTransactionLike): Transaction {
  return brand({
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromPgliteResult<R>(await tx.query(text, params as unknown[] | undefined));
    },
  });
}

/** A Database over a node-postgres `Pool` (each transaction takes its own connection). */
export function postgresDatabase(pool: PgPoolLike): Database {
  return {
    kind: 'postgres',
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromPgResult<R>(await pool.query(text, params as unknown[] | undefined));
    },
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        try {
          const result = await work(pgTransaction(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackError) {
            // The connection is unusable; make the pool discard it instead of reusing it.
            broken =
              rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          }
          throw error;
        }
      } finally {
        client.release(broken);
      }
    },
    async listen(channel, onNotify) {
      const client = await pool.connect();
      const listener = (message: { channel: string; payload?: string }) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      };
      client.on('notification', listener);
      try {
        await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } catch (error) {
        client.removeListener('notification', listener);
        client.release(error instanceof Error ? error : true);
        throw error;
      }
      let closed = false;
      return async () => {
        if (closed) return;
        closed = true;
        client.removeListener('notification', listener);
        try {
          await client.query(`UNLISTEN ${quoteIdentifier(channel)}`);
          client.release();
        } catch (error) {
          client.release(error instanceof Error ? error : true);
        }
      };
    },
  };
}

/**
 * A Database over an embedded PGlite instance. PGlite is ONE session: transactions are
 * serialised by PGlite itself, so there is no lock contention and only one relay makes sense.
 * Raw BEGIN statements are never issued on it.
 */
export function pgliteDatabase(db: PgliteLike): Database {
  return {
    kind: 'pglite',
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromPgliteResult<R>(await db.query(text, params as unknown[] | undefined));
    },
    transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      return db.transaction((tx) => work(pgliteTransaction(tx)));
    },
    async listen(channel, onNotify) {
      quoteIdentifier(channel);
      const unsubscribe = await db.listen(channel, onNotify);
      return async () => {
        await unsubscribe();
      };
    },
  };
}
