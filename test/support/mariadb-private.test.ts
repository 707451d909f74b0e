/**
 * The private MariaDB server itself: it answers on its own port, keeps committed rows across a
 * clean restart and across a crash (SIGKILL), takes extra server arguments (a row binlog, as a
 * CDC source needs), and leaves nothing behind.
 */
import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { startPrivateMariadb, type PrivateMariadb } from './mariadb-private.js';

let server: PrivateMariadb | undefined;
afterEach(async () => {
  await server?.destroy();
  server = undefined;
});

async function query<T>(url: string, sql: string): Promise<T[]> {
  const connection = await mysql.createConnection(url);
  try {
    const [rows] = await connection.query(sql);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

describe('a private MariaDB server', () => {
  it('keeps committed rows across a clean restart and a crash, on the same port, and is removed by destroy()', async () => {
    server = await startPrivateMariadb();
    expect(server.port).not.toBe(3306);
    await query(server.url, 'CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB');
    await query(server.url, 'INSERT INTO t VALUES (1)');

    const firstPid = server.pid();
    await server.restart('SIGTERM');
    expect(server.pid()).not.toBe(firstPid);
    await query(server.url, 'INSERT INTO t VALUES (2)');

    await server.stop('SIGKILL');
    expect(server.pid()).toBeUndefined();
    await expect(query(server.url, 'SELECT 1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.start();
    expect(await query<{ id: number }>(server.url, 'SELECT id FROM t ORDER BY id')).toEqual([
      { id: 1 },
      { id: 2 },
    ]);

    const dataDir = server.dataDir;
    await server.destroy();
    server = undefined;
    expect(existsSync(dataDir)).toBe(false);
  });

  it('takes extra server arguments: a row-format binlog for a CDC source', async () => {
    server = await startPrivateMariadb({
      serverArgs: ['--log-bin=binlog', '--binlog-format=ROW', '--server-id=7'],
      database: 'cdc',
    });
    expect(server.url).toMatch(/\/cdc$/);
    const vars = await query<{ Variable_name: string; Value: string }>(
      server.url,
      `SHOW VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', 'server_id')`,
    );
    expect(Object.fromEntries(vars.map((v) => [v.Variable_name, v.Value]))).toEqual({
      log_bin: 'ON',
      binlog_format: 'ROW',
      server_id: '7',
    });
  });
});
