/**
 * openDatabase: a PostgreSQL URL (argument or DATABASE_URL) opens a pool on the real server;
 * nothing opens PGlite in memory; a folder keeps PGlite's data across restarts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  migrateOutbox,
  openDatabase,
  UnsupportedDatabaseSettingError,
  UnsupportedDatabaseVersionError,
} from 'evgen-runtime';
import { checkMysqlBinlog, checkMysqlVersion } from '../../src/runtime/db/mysql-server-version.js';
import { resolveDatabaseLocation } from '../../src/runtime/db/open-database.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';

describe('resolveDatabaseLocation', () => {
  it('picks PostgreSQL for postgres URLs, PGlite otherwise, and DATABASE_URL when no location is given', () => {
    const env = {};
    expect(resolveDatabaseLocation('postgres://h/db', env)).toEqual({
      kind: 'postgres',
      url: 'postgres://h/db',
    });
    expect(resolveDatabaseLocation('postgresql://h/db', env).kind).toBe('postgres');
    expect(resolveDatabaseLocation(undefined, env)).toEqual({ kind: 'pglite', dataDir: undefined });
    expect(resolveDatabaseLocation(undefined, { DATABASE_URL: '' })).toEqual({
      kind: 'pglite',
      dataDir: undefined,
    });
    expect(resolveDatabaseLocation('memory://', env)).toEqual({
      kind: 'pglite',
      dataDir: undefined,
    });
    expect(resolveDatabaseLocation('./data/pg', env)).toEqual({
      kind: 'pglite',
      dataDir: './data/pg',
    });
    expect(resolveDatabaseLocation('file:///var/lib/my%20app', env)).toEqual({
      kind: 'pglite',
      dataDir: '/var/lib/my app',
    });
    expect(resolveDatabaseLocation(undefined, { DATABASE_URL: 'postgres://env/db' })).toEqual({
      kind: 'postgres',
      url: 'postgres://env/db',
    });
    // An explicit location wins over the environment.
    expect(resolveDatabaseLocation('memory://', { DATABASE_URL: 'postgres://env/db' }).kind).toBe(
      'pglite',
    );
  });

  it('picks MySQL/MariaDB for mysql:// and mariadb:// URLs', () => {
    expect(resolveDatabaseLocation('mysql://root@h:3306/db', {})).toEqual({
      kind: 'mysql',
      url: 'mysql://root@h:3306/db',
    });
    expect(resolveDatabaseLocation('MariaDB://root@h/db', {})).toEqual({
      kind: 'mysql',
      url: 'mysql://root@h/db',
    });
  });

  it('refuses other URL schemes instead of taking them for a folder, naming the supported ones', () => {
    for (const url of ['mssql://h/db', 'redis://h', 'sqlite://x.db']) {
      expect(() => resolveDatabaseLocation(url, {})).toThrow(
        /unsupported URL scheme '[a-z]+:'.*postgres:\/\/.*mysql:\/\/.*mariadb:\/\//,
      );
    }
  });
});

describe('openDatabase', () => {
  it('opens a pool on the PostgreSQL server a URL names (from DATABASE_URL too)', async () => {
    for (const db of [
      await openDatabase(TEST_DATABASE_URL),
      await openDatabase(undefined, { env: { DATABASE_URL: TEST_DATABASE_URL } }),
    ]) {
      try {
        expect(db.kind).toBe('postgres');
        const { rows } = await db.transaction((tx) =>
          tx.query<{ server: string }>("SELECT current_setting('server_version_num') AS server"),
        );
        expect(Number(rows[0]!.server)).toBeGreaterThan(100000);
      } finally {
        await db.close();
      }
    }
  });

  it('opens a pool on the MariaDB server a mysql:// or mariadb:// URL names', async () => {
    const test = await createMariadbDatabase('evgen_open');
    try {
      for (const url of [test.url, test.url.replace(/^mysql:/, 'mariadb:')]) {
        const db = await openDatabase(url);
        try {
          expect(db.kind).toBe('mysql');
          expect(db.dialect.name).toBe('mysql');
          const { rows } = await db.transaction((tx) =>
            tx.query<{ version: string }>('SELECT VERSION() AS version'),
          );
          expect(rows[0]!.version).toMatch(/MariaDB/);
          await migrateOutbox(db);
        } finally {
          await db.close();
        }
      }
    } finally {
      await test.drop();
    }
  });

  it('refuses MySQL < 8.0.1 and MariaDB < 10.6 (no SKIP LOCKED) with the version and what is needed', () => {
    for (const [reported, needed] of [
      [
        '10.5.23-MariaDB-0+deb11u1',
        /MariaDB 10\.5\.23 is too old.*SKIP LOCKED.*MariaDB ≥ 10\.6\.0/,
      ],
      ['5.5.5-10.4.1-MariaDB', /MariaDB 10\.4\.1 is too old/],
      ['5.7.44-log', /MySQL 5\.7\.44 is too old.*MySQL ≥ 8\.0\.1/],
      ['8.0.0-dmr', /MySQL 8\.0\.0 is too old/],
    ] as const) {
      expect(() => checkMysqlVersion(reported)).toThrow(UnsupportedDatabaseVersionError);
      expect(() => checkMysqlVersion(reported)).toThrow(needed);
    }
    for (const reported of [
      '8.0.1',
      '8.4.3',
      '10.6.0-MariaDB',
      '10.11.19-MariaDB-0+deb12u1',
      '11.4.2-MariaDB',
    ])
      expect(checkMysqlVersion(reported).version[0]).toBeGreaterThanOrEqual(8);
  });

  it('refuses a binary log written by statement, which InnoDB cannot keep for READ COMMITTED', () => {
    for (const logBin of ['1', 'ON', 'on'])
      expect(() => checkMysqlBinlog('MariaDB', logBin, 'STATEMENT')).toThrow(
        UnsupportedDatabaseSettingError,
      );
    for (const [logBin, format] of [
      ['0', 'STATEMENT'],
      ['OFF', 'STATEMENT'],
      ['1', 'MIXED'],
      ['ON', 'ROW'],
    ] as const)
      expect(() => checkMysqlBinlog('MariaDB', logBin, format)).not.toThrow();
  });

  it('keeps PGlite data in the folder it is given, across a close and reopen', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'evgen-pglite-'));
    try {
      const first = await openDatabase(join(folder, 'data'));
      expect(first.kind).toBe('pglite');
      await first.query('CREATE TABLE kept (value text)');
      await first.transaction((tx) => tx.query("INSERT INTO kept VALUES ('still here')"));
      await first.close();
      const again = await openDatabase(pathToFileURL(join(folder, 'data')).href);
      try {
        const { rows } = await again.query<{ value: string }>('SELECT value FROM kept');
        expect(rows).toEqual([{ value: 'still here' }]);
      } finally {
        await again.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 300_000); // two PGlite starts, slow on a loaded machine
});
