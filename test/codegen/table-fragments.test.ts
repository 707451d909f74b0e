/**
 * `evgen tables <layer>`: the outbox, inbox and (with --idempotency) HTTP idempotency tables in
 * each data layer's own schema tooling, checked against evgen's SQL migrations on the real
 * PostgreSQL and MariaDB. Every server-side check below covers all five tables.
 *   - Drizzle on PostgreSQL: drizzle-kit's own diff (`drizzle-kit push` against a schema migrated
 *     by evgen) finds nothing to change, and does find an index dropped behind its back.
 *   - Drizzle on MariaDB: drizzle-kit 0.31.11 cannot introspect MariaDB (its CHECK-constraint query
 *     reads upper-case column labels, MariaDB returns them as written, and push/pull exit 1 with
 *     no message), so the SQL `drizzle-kit generate` writes from the fragment is applied to a
 *     database of its own and compared with evgen's by information_schema.
 *   - Kysely and Knex: the generated migration's `up` is applied through the library, and the
 *     tables compared with evgen's by information_schema (column collations included); `down`
 *     removes them again.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import knexFactory from 'knex';
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool } from 'mysql2';
import { DataSource, type EntitySchema } from 'typeorm';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { evgenTables } from '../../src/codegen/tables/evgen-tables.js';
import { drizzleTablesModule } from '../../src/codegen/tables/drizzle-tables.js';
import { knexMigrationModule } from '../../src/codegen/tables/knex-tables.js';
import { kyselyTablesModule } from '../../src/codegen/tables/kysely-tables.js';
import { prismaModelsFragment } from '../../src/codegen/tables/prisma-tables.js';
import { typeormEntitiesModule } from '../../src/codegen/tables/typeorm-tables.js';
import { inboxMigrationStatements } from '../../src/runtime/inbox/migrate-inbox.js';
import {
  outboxMigrationStatements,
  outboxMigrationSql,
} from '../../src/runtime/outbox/migration.js';
import { inboxMigrationSql } from '../../src/runtime/inbox/migrate-inbox.js';
import {
  idempotencyMigrationSql,
  idempotencyMigrationStatements,
} from '../../src/runtime/idempotency/idempotency-migration.js';
import { MYSQL_DIALECT } from '../../src/runtime/db/sql-dialect.js';
import {
  createTestSchema,
  TEST_DATABASE_URL,
  uniqueName,
  type TestSchema,
} from '../support/postgres.js';
import { createMariadbDatabase, type TestMariadbDatabase } from '../support/mariadb.js';
import { mysqlTableShape, postgresTableShape } from '../support/table-shape.js';
import { typecheckProgram } from '../support/typecheck.js';
import { runTables } from '../../src/cli/commands/tables.js';
import { existsSync } from 'node:fs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Columns of the five tables together (21 + 3 + 4 + 6 outbox/inbox, 9 idempotency). */
const COLUMN_COUNT = 43;

/** evgen's three migrations for MySQL/MariaDB, statement by statement. */
const MYSQL_STATEMENTS = [
  outboxMigrationSql({}, MYSQL_DIALECT),
  inboxMigrationSql({}, MYSQL_DIALECT),
  idempotencyMigrationSql({}, MYSQL_DIALECT),
].flatMap((script) =>
  script
    .split(/;\n/)
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);

/** evgen's three migrations for PostgreSQL in `schema`. */
function postgresStatements(schema: string): string[] {
  return [
    ...outboxMigrationStatements({ schema }),
    ...inboxMigrationStatements({ schema }),
    ...idempotencyMigrationStatements({ schema }),
  ] as string[];
}
const run = promisify(execFile);

/** A folder under node_modules (so the written modules resolve the libraries), removed afterwards. */
async function moduleFolder(): Promise<string> {
  const folder = join(REPO, 'node_modules', `.${uniqueName('evgen_tables')}`);
  await mkdir(folder, { recursive: true });
  return folder;
}

async function importModule<T>(folder: string, name: string, text: string): Promise<T> {
  const file = join(folder, name);
  await writeFile(file, text);
  return (await import(pathToFileURL(file).href)) as T;
}

interface Migration<D> {
  up(db: D): Promise<void>;
  down(db: D): Promise<void>;
}

/** TypeORM's own schema diff (what `migration:generate` writes): the statements it would run. */
async function typeormDiff(
  options: ConstructorParameters<typeof DataSource>[0],
): Promise<string[]> {
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  try {
    const log = await dataSource.driver.createSchemaBuilder().log();
    return log.upQueries.map((query) => query.query);
  } finally {
    await dataSource.destroy();
  }
}

interface PrismaModelDelegate {
  findMany(args?: object): Promise<Record<string, unknown>[]>;
  create(args: { data: Record<string, unknown> }): Promise<Record<string, unknown>>;
}

/**
 * A Prisma client generated from the models fragment plus a generator and datasource, the way a
 * service generates its own (`prisma generate`: no schema engine runs, PRISMA_SCHEMA_ENGINE_BINARY
 * stands in for the binary it would download from binaries.prisma.sh, unreachable here).
 */
async function prismaClientFor(
  folder: string,
  provider: 'postgresql' | 'mysql',
  fragment: string,
  adapter: PrismaPg | PrismaMariaDb,
): Promise<{ models: Record<string, PrismaModelDelegate>; disconnect(): Promise<void> }> {
  const dir = join(folder, `prisma-${provider}`);
  await mkdir(dir);
  const schema = `generator client {\n  provider = "prisma-client"\n  output   = "./client"\n}\n\ndatasource db {\n  provider = "${provider}"\n}\n\n${fragment}`;
  await writeFile(join(dir, 'schema.prisma'), schema);
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  };
  await run(
    join(REPO, 'node_modules/.bin/prisma'),
    ['validate', '--schema', join(dir, 'schema.prisma')],
    { cwd: dir, env },
  );
  await run(
    join(REPO, 'node_modules/.bin/prisma'),
    ['generate', '--schema', join(dir, 'schema.prisma')],
    { cwd: dir, env },
  );
  const module = (await import(pathToFileURL(join(dir, 'client/client.ts')).href)) as {
    PrismaClient: new (options: { adapter: PrismaPg | PrismaMariaDb }) => Record<
      string,
      unknown
    > & {
      $disconnect(): Promise<void>;
    };
  };
  const client = new module.PrismaClient({ adapter });
  return {
    models: client as unknown as Record<string, PrismaModelDelegate>,
    disconnect: () => client.$disconnect(),
  };
}

/**
 * Prisma Migrate's diff needs the schema-engine binary (binaries.prisma.sh is not reachable
 * here), so the models are checked by the client instead: every field of every model is read
 * from a row evgen's migration's tables hold, and inbox rows written through Prisma read back.
 */
async function exerciseEvgenTablesThroughPrisma(
  models: Record<string, PrismaModelDelegate>,
  insertRows: () => Promise<void>,
): Promise<void> {
  await insertRows();
  const [row] = await models.outboxEvent!.findMany();
  expect(row).toMatchObject({
    aggregateType: 'order',
    aggregateId: 'o-1',
    status: 'READY',
    attempts: 0,
  });
  expect(Object.keys(row!).sort()).toHaveLength(21);
  await models.outboxEventAggregateVersion!.create({
    data: { aggregateType: 'order', aggregateId: 'o-1', version: 1n },
  });
  await models.inboxMessage!.create({
    data: { messageId: 'm-1', consumer: 'c', receivedAt: new Date() },
  });
  await models.inboxAggregateVersion!.create({
    data: {
      consumer: 'c',
      aggregateType: 'order',
      aggregateId: 'o-1',
      version: 2n,
      messageId: 'm-1',
      appliedAt: new Date(),
    },
  });
  expect(await models.inboxMessage!.findMany()).toMatchObject([
    { messageId: 'm-1', consumer: 'c', processedAt: null },
  ]);
  expect(await models.inboxAggregateVersion!.findMany()).toMatchObject([
    { version: 2n, messageId: 'm-1' },
  ]);
  expect(await models.outboxEventAggregateVersion!.findMany()).toMatchObject([{ version: 1n }]);
  // The idempotency row evgen's statements would write: every field read, one more written.
  const [request] = await models.idempotencyKey!.findMany();
  expect(request).toMatchObject({
    idempotencyKey: 'req-abc-123',
    requestHash: 'sha256:abc',
    status: 'COMPLETED',
    attempts: 1,
    response: '{"status":201}',
    leaseToken: null,
  });
  expect(Object.keys(request!).sort()).toHaveLength(9);
  await models.idempotencyKey!.create({
    data: {
      idempotencyKey: 'req-abc-124',
      requestHash: 'sha256:def',
      status: 'IN_PROGRESS',
      createdAt: new Date(),
    },
  });
  expect(
    (await models.idempotencyKey!.findMany({ orderBy: { idempotencyKey: 'asc' } })).map((row) => [
      row.idempotencyKey,
      row.attempts,
    ]),
  ).toEqual([
    ['req-abc-123', 1],
    ['req-abc-124', 1],
  ]);
}

describe('table fragments', () => {
  it('evgen tables writes the fragment with --out, and refuses a bad layer, dialect or name with exit 2, writing nothing', async () => {
    const folder = await moduleFolder();
    try {
      const out = join(folder, 'tables.ts');
      expect(await runTables('kysely', { dialect: 'mysql', outboxTable: 'app_outbox', out })).toBe(
        0,
      );
      expect(await readFile(out, 'utf8')).toBe(
        kyselyTablesModule(evgenTables('mysql', { outboxTable: 'app_outbox' })),
      );
      expect(await readFile(out, 'utf8')).not.toContain('idempotency');
      // --idempotency-table includes the idempotency table under that name.
      expect(await runTables('drizzle', { idempotencyTable: 'app_request', out })).toBe(0);
      const withIdempotency = await readFile(out, 'utf8');
      expect(withIdempotency).toBe(
        drizzleTablesModule(evgenTables('postgres', { idempotencyTable: 'app_request' })),
      );
      expect(withIdempotency).toContain("pgTable('app_request'");
      expect(await runTables('typeorm', { idempotency: true, out })).toBe(0);
      expect(await readFile(out, 'utf8')).toContain("tableName: 'idempotency_key'");
      const refused = join(folder, 'refused.ts');
      expect(await runTables('sequelize', { out: refused })).toBe(2);
      expect(await runTables('drizzle', { dialect: 'sqlite', out: refused })).toBe(2);
      expect(await runTables('drizzle', { dialect: 'mysql', schema: 'app', out: refused })).toBe(2);
      expect(await runTables('knex', { outboxTable: 'outbox; DROP TABLE x', out: refused })).toBe(
        2,
      );
      expect(await runTables('prisma', { idempotencyTable: 'idem key', out: refused })).toBe(2);
      expect(existsSync(refused)).toBe(false);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('every TypeScript fragment type-checks against its library, both dialects, with and without names', async () => {
    const folder = await moduleFolder();
    try {
      const files: string[] = [];
      const variants = [
        evgenTables('postgres'),
        evgenTables('postgres', {
          schema: 'app',
          outboxTable: 'app_outbox',
          inboxTable: 'app_inbox',
          orderingTable: 'app_order',
          idempotencyTable: 'app_request',
        }),
        evgenTables('postgres', { idempotency: true }),
        evgenTables('mysql'),
        evgenTables('mysql', { outboxTable: 'app_outbox', idempotency: true }),
      ];
      for (const [i, tables] of variants.entries())
        for (const [layer, render] of Object.entries({
          drizzle: drizzleTablesModule,
          kysely: kyselyTablesModule,
          knex: knexMigrationModule,
          typeorm: typeormEntitiesModule,
        })) {
          const file = join(folder, `${layer}-${i}.ts`);
          await writeFile(file, render(tables));
          files.push(file);
        }
      expect(typecheckProgram(files).diagnostics).toEqual([]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('table fragments on PostgreSQL', () => {
  let evgen: TestSchema;
  let tool: TestSchema;
  let folder: string;
  beforeAll(async () => {
    evgen = await createTestSchema('evgen_tbl');
    tool = await createTestSchema('evgen_tbl');
    folder = await moduleFolder();
    for (const statement of postgresStatements(evgen.schema)) await evgen.pool.query(statement);
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
    await evgen?.drop();
    await tool?.drop();
  });

  it('drizzle-kit push finds no drift between the Drizzle tables and evgen’s migration', async () => {
    const dir = join(folder, 'drizzle-pg');
    await mkdir(dir);
    await writeFile(
      join(dir, 'schema.ts'),
      drizzleTablesModule(evgenTables('postgres', { schema: evgen.schema, idempotency: true })),
    );
    await writeFile(
      join(dir, 'drizzle.config.mjs'),
      `export default ${JSON.stringify({
        dialect: 'postgresql',
        schema: './schema.ts',
        schemaFilter: [evgen.schema],
        dbCredentials: { url: TEST_DATABASE_URL },
      })};\n`,
    );
    const push = () =>
      run(
        join(REPO, 'node_modules/.bin/drizzle-kit'),
        ['push', '--verbose', '--config', 'drizzle.config.mjs'],
        {
          cwd: dir,
        },
      );
    const clean = await push();
    expect(clean.stdout).toContain('No changes detected');
    // The diff is live: an index missing from the database is what push then creates.
    await evgen.pool.query(`DROP INDEX "${evgen.schema}".outbox_event_sent_idx`);
    const drifted = await push();
    expect(drifted.stdout).toContain('CREATE INDEX "outbox_event_sent_idx"');
  });

  it('the Kysely migration creates the tables evgen’s migration creates', async () => {
    const migration = await importModule<Migration<Kysely<unknown>>>(
      folder,
      'kysely-pg.ts',
      kyselyTablesModule(evgenTables('postgres', { schema: tool.schema, idempotency: true })),
    );
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: tool.newPool(2) }) });
    try {
      await migration.up(db);
      await expectSameShape(tool, evgen);
      await migration.down(db);
      expect((await postgresTableShape(tool.pool, tool.schema)).columns).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it('the Knex migration creates the tables evgen’s migration creates', async () => {
    const migration = await importModule<Migration<knexFactory.Knex>>(
      folder,
      'knex-pg.ts',
      knexMigrationModule(evgenTables('postgres', { schema: tool.schema, idempotency: true })),
    );
    const knex = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL });
    try {
      await migration.up(knex);
      await expectSameShape(tool, evgen);
      await migration.down(knex);
      expect((await postgresTableShape(tool.pool, tool.schema)).columns).toEqual([]);
    } finally {
      await knex.destroy();
    }
  });

  it('TypeORM’s schema diff finds nothing to change in the entities', async () => {
    const { evgenEntities } = await importModule<{ evgenEntities: EntitySchema[] }>(
      folder,
      'typeorm-pg.ts',
      typeormEntitiesModule(evgenTables('postgres', { schema: evgen.schema, idempotency: true })),
    );
    const options = {
      type: 'postgres',
      url: TEST_DATABASE_URL,
      schema: evgen.schema,
      entities: evgenEntities,
    } as const;
    expect(await typeormDiff(options)).toEqual([]);
    // The diff is live: an index missing from the database is what TypeORM then creates.
    await evgen.pool.query(`DROP INDEX "${evgen.schema}".inbox_message_received_at_idx`);
    expect((await typeormDiff(options)).join('\n')).toContain(
      'CREATE INDEX "inbox_message_received_at_idx"',
    );
    await evgen.pool.query(
      `CREATE INDEX inbox_message_received_at_idx ON "${evgen.schema}".inbox_message (received_at)`,
    );
    // TypeORM compares column collations too: the key column's "C" is what it would restore.
    const key = `"${evgen.schema}".idempotency_key ALTER COLUMN idempotency_key TYPE varchar(255)`;
    await evgen.pool.query(`ALTER TABLE ${key} COLLATE "default"`);
    expect((await typeormDiff(options)).join('\n')).toContain('COLLATE "C"');
    await evgen.pool.query(`ALTER TABLE ${key} COLLATE "C"`);
  });

  it('a Prisma client generated from the models reads and writes evgen’s tables', async () => {
    const fragment = prismaModelsFragment(evgenTables('postgres', { idempotency: true }));
    const prisma = await prismaClientFor(
      folder,
      'postgresql',
      fragment,
      new PrismaPg({ connectionString: TEST_DATABASE_URL, max: 2 }, { schema: tool.schema }),
    );
    for (const statement of postgresStatements(tool.schema)) await tool.pool.query(statement);
    try {
      await exerciseEvgenTablesThroughPrisma(prisma.models, async () => {
        await tool.pool.query(
          `INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at)
           VALUES (gen_random_uuid(), 'order', 'o-1', 'order.OrderCreated', 1, '{"a":1}', now())`,
        );
        await tool.pool.query(
          `INSERT INTO idempotency_key (idempotency_key, request_hash, status, response, completed_at)
           VALUES ('req-abc-123', 'sha256:abc', 'COMPLETED', '{"status":201}', now())`,
        );
      });
    } finally {
      await prisma.disconnect();
      for (const table of [
        'outbox_event',
        'outbox_event_aggregate_version',
        'inbox_message',
        'inbox_aggregate_version',
        'idempotency_key',
      ])
        await tool.pool.query(`DROP TABLE IF EXISTS "${tool.schema}".${table}`);
    }
  });
});

async function expectSameShape(tool: TestSchema, evgen: TestSchema): Promise<void> {
  const made = await postgresTableShape(tool.pool, tool.schema);
  const expected = await postgresTableShape(evgen.pool, evgen.schema);
  expect((expected.columns as unknown[]).length).toBe(COLUMN_COUNT);
  expect(made).toEqual(expected);
}

describe('table fragments on MariaDB', () => {
  let evgen: TestMariadbDatabase;
  let tool: TestMariadbDatabase;
  let folder: string;
  beforeAll(async () => {
    evgen = await createMariadbDatabase('evgen_tbl');
    tool = await createMariadbDatabase('evgen_tbl');
    folder = await moduleFolder();
    const connection = await evgen.pool.getConnection();
    try {
      for (const statement of MYSQL_STATEMENTS) await connection.query(statement);
    } finally {
      connection.release();
    }
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
    await evgen?.drop();
    await tool?.drop();
  });

  async function expectSameShape(ignoreCollation = false): Promise<void> {
    const expected = await mysqlTableShape(evgen.pool, evgen.schema);
    expect((expected.columns as unknown[]).length).toBe(COLUMN_COUNT);
    const made = await mysqlTableShape(tool.pool, tool.schema);
    if (!ignoreCollation) {
      expect(made).toEqual(expected);
      return;
    }
    expect(withoutCollation(made)).toEqual(withoutCollation(expected));
  }

  async function dropAll(): Promise<void> {
    const [rows] = await tool.pool.query(
      'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [tool.schema],
    );
    for (const { name } of rows as { name: string }[])
      await tool.pool.query(`DROP TABLE \`${name}\``);
  }

  it('the SQL drizzle-kit generates from the mysql-core tables is evgen’s migration', async () => {
    const dir = join(folder, 'drizzle-mysql');
    await mkdir(dir);
    await writeFile(
      join(dir, 'schema.ts'),
      drizzleTablesModule(evgenTables('mysql', { idempotency: true })),
    );
    await writeFile(
      join(dir, 'drizzle.config.mjs'),
      `export default ${JSON.stringify({ dialect: 'mysql', schema: './schema.ts', out: './out' })};\n`,
    );
    await run(
      join(REPO, 'node_modules/.bin/drizzle-kit'),
      ['generate', '--config', 'drizzle.config.mjs'],
      {
        cwd: dir,
      },
    );
    const sqlFile = (await readdir(join(dir, 'out'))).find((name) => name.endsWith('.sql'))!;
    const script = await readFile(join(dir, 'out', sqlFile), 'utf8');
    try {
      for (const statement of script.split('--> statement-breakpoint'))
        if (statement.trim() !== '') await tool.pool.query(statement);
      // Drizzle's mysql-core has no table or column collation: the tables take the database's
      // default instead of utf8mb4_bin (case-sensitive keys) and ASCII for the UUID columns.
      await expectSameShape(true);
      const shape = await mysqlTableShape(tool.pool, tool.schema);
      expect(
        (shape.tables as { TABLE_COLLATION: string }[]).map((t) => t.TABLE_COLLATION),
      ).not.toContain('utf8mb4_bin');
    } finally {
      await dropAll();
    }
  });

  it('the Kysely migration creates the tables evgen’s migration creates', async () => {
    const migration = await importModule<Migration<Kysely<unknown>>>(
      folder,
      'kysely-mysql.ts',
      kyselyTablesModule(evgenTables('mysql', { idempotency: true })),
    );
    const db = new Kysely<unknown>({
      dialect: new MysqlDialect({ pool: createPool({ uri: tool.url, connectionLimit: 2 }) }),
    });
    try {
      await migration.up(db);
      await expectSameShape();
      await migration.down(db);
      expect((await mysqlTableShape(tool.pool, tool.schema)).columns).toEqual([]);
    } finally {
      await db.destroy();
      await dropAll();
    }
  });

  it('the Knex migration creates the tables evgen’s migration creates', async () => {
    const migration = await importModule<Migration<knexFactory.Knex>>(
      folder,
      'knex-mysql.ts',
      knexMigrationModule(evgenTables('mysql', { idempotency: true })),
    );
    const knex = knexFactory({ client: 'mysql2', connection: tool.url });
    try {
      await migration.up(knex);
      await expectSameShape();
      await migration.down(knex);
      expect((await mysqlTableShape(tool.pool, tool.schema)).columns).toEqual([]);
    } finally {
      await knex.destroy();
      await dropAll();
    }
  });

  it('TypeORM’s schema diff finds nothing to change in the entities', async () => {
    const { evgenEntities } = await importModule<{ evgenEntities: EntitySchema[] }>(
      folder,
      'typeorm-mysql.ts',
      typeormEntitiesModule(evgenTables('mysql', { idempotency: true })),
    );
    const options = { type: 'mariadb', url: evgen.url, entities: evgenEntities } as const;
    expect(await typeormDiff(options)).toEqual([]);
    await evgen.pool.query('DROP INDEX inbox_message_received_at_idx ON inbox_message');
    expect((await typeormDiff(options)).join('\n')).toContain(
      'CREATE INDEX `inbox_message_received_at_idx`',
    );
    await evgen.pool.query(
      'CREATE INDEX inbox_message_received_at_idx ON inbox_message (received_at)',
    );
  });

  it('a Prisma client generated from the models reads and writes evgen’s tables', async () => {
    const url = new URL(tool.url);
    const prisma = await prismaClientFor(
      folder,
      'mysql',
      prismaModelsFragment(evgenTables('mysql', { idempotency: true })),
      new PrismaMariaDb({
        host: url.hostname,
        port: Number(url.port),
        user: decodeURIComponent(url.username),
        database: tool.schema,
        connectionLimit: 2,
      }),
    );
    const connection = await tool.pool.getConnection();
    try {
      for (const statement of MYSQL_STATEMENTS) await connection.query(statement);
      await exerciseEvgenTablesThroughPrisma(prisma.models, async () => {
        await connection.query(
          `INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers, available_at, created_at)
           VALUES (UUID(), 'order', 'o-1', 'order.OrderCreated', 1, '{"a":1}', UTC_TIMESTAMP(3), '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
        );
        await connection.query(
          `INSERT INTO idempotency_key (idempotency_key, request_hash, status, response, created_at, completed_at)
           VALUES ('req-abc-123', 'sha256:abc', 'COMPLETED', '{"status":201}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
        );
      });
    } finally {
      connection.release();
      await prisma.disconnect();
      await dropAll();
    }
  });
});

/** The shape with every charset and collation left out (what Drizzle's mysql-core cannot declare). */
function withoutCollation(shape: Record<string, unknown>): Record<string, unknown> {
  const strip = (rows: unknown) =>
    (rows as Record<string, unknown>[]).map((row) => {
      const { CHARACTER_SET_NAME: _c, COLLATION_NAME: _n, TABLE_COLLATION: _t, ...rest } = row;
      return rest;
    });
  return { ...shape, tables: strip(shape.tables), columns: strip(shape.columns) };
}
