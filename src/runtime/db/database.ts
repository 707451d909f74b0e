/**
 * The one database abstraction the runtime uses, with adapters for node-postgres and PGlite here
 * and for mysql2 (MySQL/MariaDB) in mysql-database.ts. A `Queryable` says which SQL dialect it
 * speaks (`dialect`, PostgreSQL when absent); evgen's statements follow it.
 *
 * A `Transaction` can only be obtained from `Database.transaction()` or by wrapping a client the
 * caller already opened a transaction on; writers, guards and handlers take a `Transaction`, so
 * the type system refuses a call made outside one.
 */
import { POSTGRES_DIALECT, type SqlDialect } from './sql-dialect.js';
import { OutsideTransactionError } from '../errors.js';
import { quoteIdentifier } from './sql-identifier.js';

export interface QueryResult<R> {
  readonly rows: R[];
  /** Rows returned by a SELECT or changed by INSERT/UPDATE/DELETE. */
  readonly rowCount: number;
}

/** How to run one statement; an adapter may ignore any of it (the result is the same). */
export interface QueryOptions {
  /**
   * Prepare the statement under this name once per connection and reuse it (node-postgres);
   * adapters that cannot prepare run `text` as usual. A name must always stand for the same
   * `text` (derive it from the text, e.g. a hash): PostgreSQL keeps it per connection.
   */
  readonly name?: string;
}

export interface Queryable {
  /** The SQL this connection speaks (bind parameters `$1` or `?`); PostgreSQL when absent. */
  readonly dialect?: SqlDialect;
  query<R = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<R>>;
}

declare const transactionBrand: unique symbol;

/** A handle on an open database transaction. Only evgen's adapters create one. */
export interface Transaction extends Queryable {
  readonly [transactionBrand]: true;
  /**
   * Runs `callback` once this transaction has committed (never after a rollback). Present where
   * evgen runs the transaction itself; a transaction the caller owns has none.
   */
  readonly afterCommit?: (callback: () => void) => void;
}

export interface ListenOptions {
  /** A lost or failed re-subscription (for logging). */
  readonly onError?: (error: unknown) => void;
}

export interface Database extends Queryable {
  /**
   * `postgres` is a server reached through a pool; `pglite` is one embedded session; `mysql` is a
   * MySQL or MariaDB server reached through a mysql2 pool.
   */
  readonly kind: 'postgres' | 'pglite' | 'mysql';
  readonly dialect: SqlDialect;
  /** Runs `work` in a transaction: commits when it resolves, rolls back and rethrows when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Subscribes to NOTIFY on `channel`; resolves to a function that unsubscribes. Rejects when the
   * first subscription fails; a subscription lost later is renewed with backoff (PostgreSQL),
   * each loss reported to `onError`, and `onNotify('')` is called when it is back.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<() => Promise<void>>;
}

// Structural types so the runtime needs neither `pg` nor PGlite loaded unless the caller uses it.
interface PgQueryResultLike {
  rows: unknown[];
  rowCount: number | null;
}
/** node-postgres's query config: with a `name` it prepares the statement once per connection. */
export interface PgQueryConfigLike {
  name: string;
  text: string;
  values?: unknown[];
}
export interface PgClientLike {
  query(text: string | PgQueryConfigLike, params?: unknown[]): Promise<PgQueryResultLike>;
  /** `I` idle (no transaction), `T` in a transaction, `E` in a failed one (pg ≥ 8.12). */
  getTransactionStatus?(): string | null;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string | undefined }) => void,
  ): unknown;
  removeListener(
    event: 'notification',
    listener: (message: { channel: string; payload?: string | undefined }) => void,
  ): unknown;
}
interface PgPoolClientLike extends PgClientLike {
  release(destroy?: boolean | Error): void;
  /**
   * node-postgres emits `error` on a checked-out client whose connection dies; without a listener
   * that is an uncaught exception. evgen listens while it holds a client.
   */
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string | undefined }) => void,
  ): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'end', listener: () => void): unknown;
  removeListener(
    event: 'notification',
    listener: (message: { channel: string; payload?: string | undefined }) => void,
  ): unknown;
}
export interface PgPoolLike {
  connect(): Promise<PgPoolClientLike>;
  query(text: string | PgQueryConfigLike, params?: unknown[]): Promise<PgQueryResultLike>;
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

/** A node-postgres query: named (prepared per connection) when `options.name` is given. */
function pgQuery(
  target: Pick<PgClientLike, 'query'>,
  text: string,
  params: readonly unknown[] | undefined,
  options: QueryOptions | undefined,
): Promise<PgQueryResultLike> {
  const values = params as unknown[] | undefined;
  if (options?.name === undefined) return target.query(text, values);
  return target.query(
    values === undefined ? { name: options.name, text } : { name: options.name, text, values },
  );
}

function fromPgResult<R>(result: PgQueryResultLike): QueryResult<R> {
  return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
}

function fromPgliteResult<R>(result: PgliteResultsLike): QueryResult<R> {
  return { rows: result.rows as R[], rowCount: result.affectedRows || result.rows.length };
}

/** Marks a connection inside an open transaction as a `Transaction`. For evgen's adapters only. */
export function brandTransaction(
  queryable: Queryable & Pick<Transaction, 'afterCommit'>,
): Transaction {
  return queryable as Transaction;
}
const brand = brandTransaction;

function pgQueryable(client: PgClientLike): Queryable {
  return {
    dialect: POSTGRES_DIALECT,
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      return fromPgResult<R>(await pgQuery(client, text, params, options));
    },
  };
}

/**
 * Wraps a node-postgres client on which the caller has already run BEGIN. evgen issues no
 * BEGIN/COMMIT on it: the caller's transaction decides what commits. Each statement is refused
 * unless the client is inside a transaction: node-postgres (≥ 8.12) reports the server's
 * transaction state after every statement, so a client that never ran BEGIN (or already
 * committed), or a Pool, which cannot tell, gets an OutsideTransactionError and writes nothing.
 */
export function pgTransaction(client: PgClientLike): Transaction {
  const queryable = pgQueryable(client);
  return brand({
    dialect: POSTGRES_DIALECT,
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      const status = client.getTransactionStatus?.();
      if (status !== 'T' && status !== 'E') {
        throw new OutsideTransactionError(
          status === 'I'
            ? 'pgTransaction: this client is not inside a transaction, so the write would commit on its own: run BEGIN on it first (and write before COMMIT)'
            : 'pgTransaction: pass a node-postgres Client or PoolClient (pg >= 8.12) on which you ran BEGIN; a Pool cannot tell whether it is inside a transaction',
        );
      }
      return queryable.query<R>(text, params, options);
    },
  });
}

/** Wraps the `tx` that PGlite's own `transaction()` passes to its callback. */
export function pgliteTransaction(tx: PgliteTransactionLike): Transaction {
  return brand({
    dialect: POSTGRES_DIALECT,
    async query<R>(text: string, params?: readonly unknown[]) {
      return fromPgliteResult<R>(await tx.query(text, params as unknown[] | undefined));
    },
  });
}

/** Backoff between LISTEN re-subscriptions after the connection was lost. */
export interface ListenReconnectOptions {
  /** First delay, ms (default 100). */
  readonly baseMs?: number;
  /** Largest delay, ms (default 10 000). */
  readonly capMs?: number;
}

export interface PostgresDatabaseOptions {
  /** Backoff of re-subscribing LISTEN after its connection was lost (default 100 ms doubling to 10 s). */
  readonly listenReconnect?: ListenReconnectOptions;
}

/**
 * A Database over a node-postgres `Pool` (each transaction takes its own connection).
 *
 * Connection loss never crashes the process: a client evgen holds (a transaction's, the LISTEN
 * one) has an `error` listener while held; the transaction then fails with the driver's error
 * (retryable) and the broken client is discarded. A LISTEN whose connection dies is subscribed
 * again with backoff (`onNotify('')` is called once it is back, since NOTIFYs sent meanwhile
 * were missed); callers keep polling in between. Give the pool itself an `error` listener too
 * (`pool.on('error', …)`): idle clients are the pool's business.
 */
export function postgresDatabase(
  pool: PgPoolLike,
  databaseOptions: PostgresDatabaseOptions = {},
): Database {
  const reconnect = {
    baseMs: databaseOptions.listenReconnect?.baseMs ?? 100,
    capMs: databaseOptions.listenReconnect?.capMs ?? 10_000,
  };
  return {
    kind: 'postgres',
    dialect: POSTGRES_DIALECT,
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      return fromPgResult<R>(await pgQuery(pool, text, params, options));
    },
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      // The connection died while we held it: the pending query rejects on its own; this only
      // keeps the event from being uncaught and makes sure the client is not reused.
      const onError = (error: Error) => {
        broken ??= error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        try {
          const result = await work(brand(pgQueryable(client)));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackError) {
            // The connection is unusable; make the pool discard it instead of reusing it.
            broken ??=
              rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          }
          throw error;
        }
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
    },
    listen(channel, onNotify, listenOptions) {
      return listenWithReconnect(pool, channel, onNotify, reconnect, listenOptions?.onError);
    },
  };
}

/** One LISTEN that survives connection loss (see postgresDatabase). */
async function listenWithReconnect(
  pool: PgPoolLike,
  channel: string,
  onNotify: (payload: string) => void,
  reconnect: { baseMs: number; capMs: number },
  onError: ((error: unknown) => void) | undefined,
): Promise<() => Promise<void>> {
  const sql = `LISTEN ${quoteIdentifier(channel)}`;
  let closed = false;
  let current: PgPoolClientLike | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  const report = (error: unknown) => {
    try {
      onError?.(error);
    } catch {
      // Reporting must not break the subscription.
    }
  };
  const onMessage = (message: { channel: string; payload?: string | undefined }) => {
    if (message.channel === channel) onNotify(message.payload ?? '');
  };

  const detach = (client: PgPoolClientLike) => {
    client.removeListener('notification', onMessage);
    client.removeListener('error', onLost);
    client.removeListener('end', onEnded);
  };
  function onLost(error: Error) {
    const client = current;
    if (client === undefined) return;
    current = undefined;
    detach(client);
    // Swallow a late second error from the same dead client.
    client.on('error', () => undefined);
    client.release(error);
    report(error);
    schedule();
  }
  function onEnded() {
    onLost(new Error(`LISTEN ${channel}: connection ended`));
  }
  function schedule() {
    if (closed || retryTimer !== undefined) return;
    failures++;
    const delay = Math.min(reconnect.capMs, reconnect.baseMs * 2 ** (failures - 1));
    retryTimer = setTimeout(
      () => {
        retryTimer = undefined;
        subscribe().then(
          () => {
            failures = 0;
            // NOTIFYs sent while we were gone are lost: let the caller look now.
            if (!closed) onNotify('');
          },
          (error: unknown) => {
            report(error);
            schedule();
          },
        );
      },
      delay * (1 + Math.random() * 0.2),
    );
    retryTimer.unref?.();
  }
  async function subscribe(): Promise<void> {
    const client = await pool.connect();
    client.on('error', onLost);
    client.on('end', onEnded);
    client.on('notification', onMessage);
    current = client;
    try {
      await client.query(sql);
    } catch (error) {
      if (current === client) {
        current = undefined;
        detach(client);
        client.on('error', () => undefined);
        client.release(error instanceof Error ? error : true);
      }
      throw error;
    }
    if (closed) await unsubscribe();
  }
  async function unsubscribe(): Promise<void> {
    const client = current;
    current = undefined;
    if (client === undefined) return;
    detach(client);
    client.on('error', () => undefined);
    try {
      await client.query(`UNLISTEN ${quoteIdentifier(channel)}`);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
    }
  }

  // The first subscription reports failure to the caller (who then polls only).
  await subscribe();
  return async () => {
    if (closed) return;
    closed = true;
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    retryTimer = undefined;
    await unsubscribe();
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
    dialect: POSTGRES_DIALECT,
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
