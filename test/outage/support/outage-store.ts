/**
 * Where an outage scenario keeps its outbox, inbox and effects: a schema on the shared PostgreSQL,
 * a database on the shared MariaDB, or a private MariaDB server the scenario may crash (the shared
 * servers are never stopped). Child processes reach it through a fault proxy: `urlThrough(port)`.
 */
import { mysqlDatabase, postgresDatabase, type Database } from 'evgen/runtime';
import { createMariadbDatabase, mariadbPool } from '../../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../../support/mariadb-private.js';
import { createTestSchema, uniqueName } from '../../support/postgres.js';

export type OutageDialect = 'postgres' | 'mariadb';

export interface OutageStore {
  readonly db: Database;
  /** The PostgreSQL schema or the MariaDB database holding the tables. */
  readonly schema: string;
  /** The server's port (what the fault proxies forward to). */
  readonly port: number;
  /** The URL a child process uses through a proxy listening on `port`. */
  urlThrough(port: number): string;
  /** `column` read as its decimal text. */
  text(column: string): string;
  /** `column` in the list bound at parameter `index` (an array of ids). */
  idIn(column: string, index: number): string;
  /** The private server, when the scenario has one. */
  readonly server?: PrivateMariadb;
  drop(): Promise<void>;
}

export async function openOutageStore(
  dialect: OutageDialect,
  privateServer: boolean,
): Promise<OutageStore> {
  if (dialect === 'postgres') {
    if (privateServer) throw new Error('a private server is MariaDB only');
    const test = await createTestSchema('evgen_outage');
    return {
      db: postgresDatabase(test.pool),
      schema: test.schema,
      port: 5432,
      urlThrough: (port) => `postgres://postgres@127.0.0.1:${port}/test`,
      text: (column) => `${column}::text`,
      idIn: (column, index) => `${column} = ANY($${index}::bigint[])`,
      drop: () => test.drop(),
    };
  }
  const mysqlSql = {
    text: (column: string) => `CAST(${column} AS CHAR)`,
    // mysql2 expands an array bound to one `?` into a list.
    idIn: (column: string) => `${column} IN (?)`,
  };
  if (privateServer) {
    const server = await startPrivateMariadb({ database: uniqueName('evgen_outage') });
    const pool = mariadbPool(server.url, 4);
    return {
      ...mysqlSql,
      db: mysqlDatabase(pool),
      schema: server.database,
      port: server.port,
      server,
      urlThrough: (port) => `mysql://root@127.0.0.1:${port}/${server.database}`,
      async drop() {
        await pool.end().catch(() => undefined);
        await server.destroy();
      },
    };
  }
  const test = await createMariadbDatabase('evgen_outage');
  const port = Number(new URL(test.url).port || 3306);
  return {
    ...mysqlSql,
    db: mysqlDatabase(test.pool),
    schema: test.schema,
    port,
    urlThrough: (proxyPort) => {
      const url = new URL(test.url);
      url.port = String(proxyPort);
      return url.toString();
    },
    drop: () => test.drop(),
  };
}
