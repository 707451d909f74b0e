/**
 * openDatabase: a PostgreSQL URL (argument or DATABASE_URL) opens a pool on the real server;
 * nothing opens PGlite in memory; a folder keeps PGlite's data across restarts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDatabase, resolveDatabaseLocation } from 'evgen-runtime';
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

  it('refuses other URL schemes instead of taking them for a folder', () => {
    expect(() => resolveDatabaseLocation('mysql://h/db', {})).toThrow(
      /unsupported URL scheme 'mysql:'/,
    );
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
