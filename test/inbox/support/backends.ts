/**
 * The two databases every inbox test runs on: the real PostgreSQL (own schema per file) and one
 * PGlite instance per file (own schema inside it). Both are real; neither is mocked.
 */
import { pgliteDatabase, postgresDatabase, type Database } from 'evgen/runtime';
import { createTestSchema, uniqueName, type TestSchema } from '../../support/postgres.js';
import { startPglite } from '../../support/pglite.js';

export interface Backend {
  readonly kind: 'postgres' | 'pglite';
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
    kind: 'pglite',
    db: pgliteDatabase(pglite),
    schema,
    unique: uniqueName,
    close: () => pglite.close(),
  };
}

/** A business table the handlers write to, so tests count effects rather than calls. */
export async function createEffectsTable(backend: Backend): Promise<string> {
  const table = backend.unique('effects');
  await backend.db.query(
    `CREATE TABLE "${backend.schema}"."${table}" (id serial PRIMARY KEY, message_id text NOT NULL, consumer text NOT NULL)`,
  );
  return `"${backend.schema}"."${table}"`;
}

export async function countRows(
  db: Database,
  table: string,
  where = 'true',
  params: unknown[] = [],
): Promise<number> {
  const result = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
    params,
  );
  return result.rows[0]!.n;
}
