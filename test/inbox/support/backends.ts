/**
 * The three databases every inbox test runs on: the real PostgreSQL (own schema per file), one
 * PGlite instance per file (own schema inside it) and the real MariaDB (own database per file).
 * All are real; none is mocked.
 */
import { mysqlDatabase, pgliteDatabase, postgresDatabase, type Database } from 'evgen/runtime';
import { createMariadbDatabase } from '../../support/mariadb.js';
import { createTestSchema, uniqueName, type TestSchema } from '../../support/postgres.js';
import { startPglite } from '../../support/pglite.js';
import { dialectSql, type DialectSql } from '../../outbox/support/dialects.js';

export type BackendKind = 'postgres' | 'pglite' | 'mariadb';
export const BACKENDS: readonly BackendKind[] = ['postgres', 'pglite', 'mariadb'];

export interface Backend extends DialectSql {
  readonly kind: BackendKind;
  readonly db: Database;
  /** Schema holding this file's tables. */
  readonly schema: string;
  /** A second, independent connection pool (real PostgreSQL only). */
  readonly otherDb?: Database;
  /** A fresh, unique table/name suffix so tests in one file never share rows. */
  unique(prefix: string): string;
  close(): Promise<void>;
}

export { uniqueName };

export async function openPostgres(): Promise<Backend> {
  const test: TestSchema = await createTestSchema('evgen_inbox');
  return {
    ...dialectSql('postgres', test.schema),
    kind: 'postgres',
    db: postgresDatabase(test.pool),
    schema: test.schema,
    otherDb: postgresDatabase(test.newPool(4)),
    unique: uniqueName,
    close: () => test.drop(),
  };
}

export async function openPglite(): Promise<Backend> {
  const pglite = await startPglite();
  const schema = uniqueName('evgen_inbox');
  await pglite.query(`CREATE SCHEMA "${schema}"`);
  return {
    ...dialectSql('pglite', schema),
    kind: 'pglite',
    db: pgliteDatabase(pglite),
    schema,
    unique: uniqueName,
    close: () => pglite.close(),
  };
}

export async function openMariadb(): Promise<Backend> {
  const test = await createMariadbDatabase('evgen_inbox');
  return {
    ...dialectSql('mariadb', test.schema),
    kind: 'mariadb',
    db: mysqlDatabase(test.pool),
    schema: test.schema,
    otherDb: mysqlDatabase(test.newPool(4)),
    unique: uniqueName,
    close: () => test.drop(),
  };
}

/** Opens the backend of `kind`. */
export function openBackend(kind: BackendKind): Promise<Backend> {
  return kind === 'postgres' ? openPostgres() : kind === 'pglite' ? openPglite() : openMariadb();
}

/** A business table the handlers write to, so tests count effects rather than calls. */
export async function createEffectsTable(backend: Backend): Promise<string> {
  const table = backend.table(backend.unique('effects'));
  await backend.db.query(
    backend.kind === 'mariadb'
      ? `CREATE TABLE ${table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, message_id VARCHAR(255) NOT NULL, consumer VARCHAR(255) NOT NULL)`
      : `CREATE TABLE ${table} (id serial PRIMARY KEY, message_id text NOT NULL, consumer text NOT NULL)`,
  );
  return table;
}

export async function countRows(
  db: Database,
  table: string,
  where = 'true',
  params: unknown[] = [],
): Promise<number> {
  const mysql = db.dialect.name === 'mysql';
  const result = await db.query<{ n: number | string }>(
    `SELECT count(*)${mysql ? '' : '::int'} AS n FROM ${table} WHERE ${mysql ? where.replace(/\$\d+/g, '?') : where}`,
    params,
  );
  return Number(result.rows[0]!.n);
}
