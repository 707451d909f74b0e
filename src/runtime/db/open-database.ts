/**
 * One entry point to a database: a PostgreSQL or MySQL/MariaDB server when a URL says so,
 * embedded PGlite otherwise. The drivers are loaded on demand, so a service installs only the one
 * it uses.
 */
import { pgliteDatabase, postgresDatabase, type Database } from './database.js';
import { mysqlDatabase } from './mysql-database.js';

export interface OpenedDatabase extends Database {
  /** Ends the pool (PostgreSQL, MySQL) or closes the embedded instance (PGlite). */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Connections in the server pool (default 10); ignored for PGlite. */
  readonly max?: number;
  /** Environment read when `location` is absent (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Where {@link openDatabase} connected, from its `location` argument and the environment. */
export type DatabaseLocation =
  | { readonly kind: 'postgres'; readonly url: string }
  /** A MySQL or MariaDB server; `url` is given as `mysql://` whichever scheme was used. */
  | { readonly kind: 'mysql'; readonly url: string }
  | { readonly kind: 'pglite'; readonly dataDir: string | undefined };

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
const MYSQL_URL = /^(?:mysql|mariadb):\/\//i;
const OTHER_URL = /^[a-z][a-z0-9+.-]+:\/\//i;

/** What {@link resolveDatabaseLocation} accepts, for error messages. */
const SUPPORTED_LOCATIONS =
  'use postgres://… or postgresql://… for a PostgreSQL server, mysql://… or mariadb://… for a MySQL/MariaDB server, a folder path for embedded PGlite, or nothing for PGlite in memory';

/**
 * - `postgres://…` / `postgresql://…` → a `pg` pool on that server;
 * - `mysql://…` / `mariadb://…` → a `mysql2` pool on that MySQL (≥ 8.0.1) or MariaDB (≥ 10.6) server;
 * - absent → `DATABASE_URL` when set, else PGlite in memory;
 * - `memory://` → PGlite in memory;
 * - a folder path or `file://` URL → PGlite persisted in that folder.
 *
 * Any other URL scheme is refused rather than taken for a folder name.
 */
export function resolveDatabaseLocation(
  location?: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): DatabaseLocation {
  const given = location ?? (env.DATABASE_URL === '' ? undefined : env.DATABASE_URL);
  if (given === undefined || given === 'memory://') return { kind: 'pglite', dataDir: undefined };
  if (POSTGRES_URL.test(given)) return { kind: 'postgres', url: given };
  if (MYSQL_URL.test(given)) return { kind: 'mysql', url: given.replace(/^[a-z]+:/i, 'mysql:') };
  if (given.startsWith('file://')) {
    return { kind: 'pglite', dataDir: decodeURIComponent(new URL(given).pathname) };
  }
  if (OTHER_URL.test(given)) {
    const scheme = given.slice(0, given.indexOf(':'));
    throw new RangeError(
      `openDatabase: unsupported URL scheme '${scheme}:' — ${SUPPORTED_LOCATIONS}`,
    );
  }
  return { kind: 'pglite', dataDir: given };
}

/** Opens the database `location` names (see {@link resolveDatabaseLocation}). */
export async function openDatabase(
  location?: string,
  options: OpenDatabaseOptions = {},
): Promise<OpenedDatabase> {
  const resolved = resolveDatabaseLocation(location, options.env);
  if (resolved.kind === 'postgres') {
    const { default: pg } = await loadDriver(() => import('pg'), 'pg', '8.23.1');
    const pool = new pg.Pool({ connectionString: resolved.url, max: options.max ?? 10 });
    // An idle connection the server closes must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    return { ...postgresDatabase(pool), close: () => pool.end() };
  }
  if (resolved.kind === 'mysql') {
    const mysql = await loadDriver(() => import('mysql2/promise'), 'mysql2', '3.24.6');
    const pool = mysql.createPool({
      uri: resolved.url,
      connectionLimit: options.max ?? 10,
      charset: 'utf8mb4',
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
    });
    // A connection the server closes must not crash the process; the pool drops it.
    pool.on('connection', (connection) => connection.on('error', () => undefined));
    return { ...mysqlDatabase(pool), close: () => pool.end() };
  }
  const { PGlite } = await loadDriver(
    () => import('@electric-sql/pglite'),
    '@electric-sql/pglite',
    '0.5.17',
  );
  const lite = resolved.dataDir === undefined ? new PGlite() : new PGlite(resolved.dataDir);
  return { ...pgliteDatabase(lite), close: () => lite.close() };
}

async function loadDriver<T>(load: () => Promise<T>, name: string, version: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(
        `openDatabase needs the '${name}' package: npm install --save-exact ${name}@${version}`,
        { cause: error },
      );
    }
    throw error;
  }
}
