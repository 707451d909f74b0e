/**
 * Test access to the machine's real MariaDB (127.0.0.1:3306, root). Each call gets its own
 * database (MySQL's schema), dropped by `drop()`, so tests run side by side on the shared server.
 * A server that is down makes the test fail loudly, never skip.
 */
import mysql from 'mysql2/promise';
import { uniqueName } from './postgres.js';

export const TEST_MARIADB_URL =
  process.env.EVGEN_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface TestMariadbDatabase {
  /** Unique database name, e.g. `evgen_t_1a2b3c4d`. */
  readonly schema: string;
  /** A pool whose connections use the database as default. */
  readonly pool: mysql.Pool;
  /** Opens another pool on the same database (e.g. to simulate a second process). */
  newPool(max?: number): mysql.Pool;
  /** The URL of the test database (for child processes and the CLI). */
  readonly url: string;
  /** Ends every pool opened here and drops the database. */
  drop(): Promise<void>;
}

/** A mysql2 pool as evgen's openDatabase configures it (plus `extra` pool options). */
export function mariadbPool(
  url: string,
  max = 10,
  extra: Omit<mysql.PoolOptions, 'uri'> = {},
): mysql.Pool {
  const pool = mysql.createPool({
    ...extra,
    uri: url,
    connectionLimit: max,
    charset: 'utf8mb4',
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
  });
  pool.on('connection', (connection) => connection.on('error', () => undefined));
  return pool;
}

export async function createMariadbDatabase(prefix = 'evgen_t'): Promise<TestMariadbDatabase> {
  const schema = uniqueName(prefix);
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection(TEST_MARIADB_URL);
  } catch (error) {
    throw new Error(
      `MariaDB is not reachable at ${TEST_MARIADB_URL}: start it (see docs/contributing.md) — ${(error as Error).message}`,
      { cause: error },
    );
  }
  await admin.query(`CREATE DATABASE \`${schema}\` DEFAULT CHARACTER SET utf8mb4`);
  await admin.end();
  const url = TEST_MARIADB_URL.replace(/\/[^/]*$/, `/${schema}`);
  const pools: mysql.Pool[] = [];
  const newPool = (max = 10) => {
    const pool = mariadbPool(url, max);
    pools.push(pool);
    return pool;
  };
  const pool = newPool();
  return {
    schema,
    pool,
    newPool,
    url,
    async drop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const cleanup = await mysql.createConnection(TEST_MARIADB_URL);
      await cleanup.query(`DROP DATABASE IF EXISTS \`${schema}\``);
      await cleanup.end();
    },
  };
}
