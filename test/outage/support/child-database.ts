/**
 * The database of a relay or consumer child process, from its URL: a `pg` pool for
 * `postgres://…`, a `mysql2` pool for `mysql://…` (MariaDB). Connection attempts give up after
 * 2 s, so a cut database shows as failures the runtime backs off from rather than hung calls.
 */
import pg from 'pg';
import { postgresDatabase, type Database } from '../../../src/runtime/db/database.js';
import { mysqlDatabase } from '../../../src/runtime/db/mysql-database.js';
import { mariadbPool } from '../../support/mariadb.js';

export function childDatabase(url: string, max: number): Database {
  if (url.startsWith('mysql://')) {
    const pool = mariadbPool(url, max, { connectTimeout: 2_000 });
    return mysqlDatabase(pool);
  }
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => undefined);
  return postgresDatabase(pool, { listenReconnect: { baseMs: 100, capMs: 1_000 } });
}
