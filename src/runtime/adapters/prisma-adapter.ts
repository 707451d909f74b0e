/**
 * Prisma (client engine with a driver adapter: `@prisma/adapter-pg` on PostgreSQL,
 * `@prisma/adapter-mariadb` on MySQL/MariaDB): the outbox row in an interactive transaction, and
 * Prisma inside the inbox transaction.
 *
 *     await prisma.$transaction(async (tx) => {
 *       await tx.order.create({ data: order });
 *       await writeOrderCreatedV2(prismaTransaction(tx), payload);
 *     });
 */
import type { Database, QueryResult, Transaction } from '../db/database.js';
import { MYSQL_DIALECT, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import {
  OutsideTransactionError,
  libraryDatabase,
  libraryHandleOf,
  libraryTransaction,
} from './library-transaction.js';

const LIBRARY = 'Prisma';

/** What evgen uses of a Prisma client: its raw-SQL calls (`$1` parameters on PostgreSQL, `?` on MySQL). */
export interface PrismaRawClientLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A full PrismaClient (it has `$connect`, which Prisma leaves out of a transaction client). */
interface PrismaClientLike extends PrismaRawClientLike {
  $connect(): Promise<void>;
  $transaction<R>(
    work: (tx: PrismaRawClientLike) => Promise<R>,
    options?: PrismaTransactionOptions,
  ): Promise<R>;
}

/** Options of an interactive transaction, passed to `prisma.$transaction` as they are. */
export interface PrismaTransactionOptions {
  /** Longest wait for a connection from Prisma's pool, ms (Prisma's default 2 000). */
  readonly maxWait?: number;
  /** Longest run of the transaction before Prisma rolls it back, ms (Prisma's default 5 000): raise it for slow handlers. */
  readonly timeout?: number;
  /** Prisma's isolation level name, e.g. `ReadCommitted`. */
  readonly isolationLevel?: string;
}

/** `never` for a full PrismaClient, so passing one where a transaction client belongs fails to compile. */
export type NotAPrismaClient<T> = '$connect' extends keyof T ? never : unknown;

/**
 * Prisma's raw calls return either rows (`$queryRawUnsafe`) or a count (`$executeRawUnsafe`),
 * never both: a statement that yields rows (SELECT, WITH … SELECT, … RETURNING) goes the first
 * way and counts its rows, any other the second and returns no rows.
 */
const YIELDS_ROWS = /^\s*(?:SELECT|WITH|VALUES|SHOW)\b|\bRETURNING\b/i;

/**
 * Prisma wraps a driver adapter's failure in its own error (code `P2010`…) and keeps the
 * database's code only as `meta.driverAdapterError.cause.originalCode`: the SQLSTATE on
 * PostgreSQL, the server's error number on MySQL/MariaDB. evgen classifies failures by SQLSTATE
 * (unique violation, serialization failure, unavailability) or by MySQL error number (a duplicate
 * inbox key, a deadlock), so the database's code and message come back out on an error whose
 * cause is Prisma's, shaped as the dialect's own driver reports it.
 */
class PrismaDriverError extends Error {
  readonly code: string;
  /** MySQL/MariaDB: the server's error number (as mysql2's `errno`). */
  readonly errno?: number;
  /**
   * MySQL/MariaDB: Prisma's error does not carry the SQLSTATE, so it is empty (classification
   * there goes by `errno`).
   */
  readonly sqlState?: string;
  constructor(code: string, message: string, options: { cause: unknown; mysql?: boolean }) {
    super(message, options);
    this.name = 'PrismaDriverError';
    this.code = code;
    if (options.mysql === true && /^\d+$/.test(code)) {
      this.errno = Number(code);
      this.sqlState = '';
    }
  }
}

function driverErrorOf(error: unknown, dialect: SqlDialect): unknown {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: unknown } } } | null)?.meta
    ?.driverAdapterError?.cause as
    { originalCode?: unknown; originalMessage?: unknown } | undefined;
  if (typeof cause?.originalCode !== 'string') return error;
  const message = typeof cause.originalMessage === 'string' ? cause.originalMessage : String(error);
  return new PrismaDriverError(cause.originalCode, message, {
    cause: error,
    mysql: dialect.name === 'mysql',
  });
}

/**
 * The SQL the client speaks, from the provider its schema was generated for (`provider` of the
 * datasource, which the client and its transaction clients carry): `mysql` is MySQL/MariaDB,
 * anything else PostgreSQL.
 */
function dialectOf(client: PrismaRawClientLike): SqlDialect {
  return (client as { _activeProvider?: unknown })._activeProvider === 'mysql'
    ? MYSQL_DIALECT
    : POSTGRES_DIALECT;
}

async function run<R>(
  client: PrismaRawClientLike,
  dialect: SqlDialect,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<R>> {
  try {
    if (YIELDS_ROWS.test(text)) {
      const rows = await client.$queryRawUnsafe<R[]>(text, ...params);
      return { rows, rowCount: rows.length };
    }
    return { rows: [], rowCount: await client.$executeRawUnsafe(text, ...params) };
  } catch (error) {
    throw driverErrorOf(error, dialect);
  }
}

/**
 * The `tx` of `prisma.$transaction(async (tx) => …)` as an evgen Transaction. The PrismaClient
 * itself (which would autocommit) is refused at compile time (it has `$connect`, a transaction
 * client has not) and at run time from JavaScript; Prisma itself refuses a transaction that
 * already ended.
 */
export function prismaTransaction<T extends PrismaRawClientLike>(
  tx: T & NotAPrismaClient<T>,
): Transaction {
  if ('$connect' in tx) {
    throw new OutsideTransactionError(
      'prismaTransaction: this PrismaClient is not a transaction, so the event would commit on its own: pass the tx of prisma.$transaction(async (tx) => …)',
    );
  }
  return wrapTransaction(tx);
}

function wrapTransaction(tx: PrismaRawClientLike): Transaction {
  const dialect = dialectOf(tx);
  return libraryTransaction(
    LIBRARY,
    tx,
    (text, params) => run(tx, dialect, text, params),
    undefined,
    dialect,
  );
}

/**
 * An evgen Database whose transactions are Prisma interactive transactions on `prisma` (with
 * `options`, e.g. a `timeout` longer than Prisma's 5 s default for slow handlers): give it to a
 * consumer (`createXConsumer({ db: prismaDatabase(prisma), … })`) and handlers write with
 * `prismaOf<Prisma.TransactionClient>(ctx.tx)` inside the inbox transaction.
 */
export function prismaDatabase(
  prisma: PrismaClientLike,
  options?: PrismaTransactionOptions,
): Database {
  const dialect = dialectOf(prisma);
  return libraryDatabase({
    library: LIBRARY,
    dialect,
    query: (text, params) => run(prisma, dialect, text, params),
    transaction: (work) => prisma.$transaction((tx) => work(wrapTransaction(tx)), options),
  });
}

/** The Prisma transaction client behind a `tx` opened by {@link prismaDatabase} (e.g. a handler's `ctx.tx`). */
// The caller names its generated client's transaction type (`Prisma.TransactionClient`).
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function prismaOf<TTransactionClient extends PrismaRawClientLike>(
  tx: Transaction,
): TTransactionClient {
  return libraryHandleOf(LIBRARY, 'prismaDatabase', tx) as TTransactionClient;
}
