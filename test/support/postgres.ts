/**
 * Test access to the machine's real PostgreSQL. Each call gets its own schema (dropped by
 * `drop()`), so tests can run side by side on the shared `test` database. A server that is
 * down makes the test fail loudly, never skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL =
  process.env.EVGEN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestSchema {
  /** Unique schema name, e.g. `evgen_t_1a2b3c4d`. */
  readonly schema: string;
  /** A pool whose connections use the schema as search_path. */
  readonly pool: pg.Pool;
  /** Opens another pool on the same schema (e.g. to simulate a second process). */
  newPool(max?: number): pg.Pool;
  /** Ends every pool opened here and drops the schema. */
  drop(): Promise<void>;
}

/** `prefix_1a2b3c4d`: a name no other test run uses (schemas, tables, NOTIFY channels). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export async function createTestSchema(prefix = 'evgen_t'): Promise<TestSchema> {
  const schema = uniqueName(prefix);
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_DATABASE_URL}: start it (see docs/contributing.md) — ${(error as Error).message}`,
      { cause: error },
    );
  }
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const pools: pg.Pool[] = [];
  const newPool = (max = 10) => {
    const pool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max,
      options: `-c search_path="${schema}"`,
    });
    // An idle client that the server kills would otherwise crash the test process.
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  const pool = newPool();
  return {
    schema,
    pool,
    newPool,
    async drop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const cleanup = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await cleanup.end();
    },
  };
}
