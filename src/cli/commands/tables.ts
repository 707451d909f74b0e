/**
 * `evgen tables <layer>`: evgen's outbox and inbox tables (and with --idempotency the HTTP
 * idempotency table) for a data layer's own schema tooling,
 * printed (or written with --out): Drizzle table definitions (pg-core / mysql-core), Kysely
 * interfaces with a migration, Knex migration, TypeORM entities, Prisma models. Each is checked
 * against evgen's SQL migration by the tool's own diff (test/codegen/table-fragments.test.ts).
 * Exit 0, 2 on a bad layer, dialect or table name (nothing written).
 */
import type { Command } from 'commander';
import { drizzleTablesModule } from '../../codegen/tables/drizzle-tables.js';
import { evgenTables, type EvgenTables } from '../../codegen/tables/evgen-tables.js';
import { knexMigrationModule } from '../../codegen/tables/knex-tables.js';
import { kyselyTablesModule } from '../../codegen/tables/kysely-tables.js';
import { prismaModelsFragment } from '../../codegen/tables/prisma-tables.js';
import { typeormEntitiesModule } from '../../codegen/tables/typeorm-tables.js';
import { refuse, reportingProblems } from '../command-support.js';
import { EXIT_OK } from '../exit-codes.js';
import { writeAtomically } from '../write-atomically.js';

export interface TablesOptions {
  /** `postgres` (default) or `mysql` (MySQL and MariaDB). */
  readonly dialect?: string;
  /** Schema of the tables (PostgreSQL; on MySQL the connection's database is used). */
  readonly schema?: string;
  /** Outbox table name (default `outbox_event`). */
  readonly outboxTable?: string;
  /** Inbox table name (default `inbox_message`). */
  readonly inboxTable?: string;
  /** Inbox ordering table name (default `inbox_aggregate_version`). */
  readonly orderingTable?: string;
  /** Include the HTTP idempotency table (`migrateIdempotency`'s). */
  readonly idempotency?: boolean;
  /** Idempotency table name (default `idempotency_key`); implies `idempotency`. */
  readonly idempotencyTable?: string;
  /** Write to this file instead of stdout. */
  readonly out?: string;
}

const LAYERS: Record<string, (tables: EvgenTables) => string> = {
  drizzle: drizzleTablesModule,
  knex: knexMigrationModule,
  kysely: kyselyTablesModule,
  prisma: prismaModelsFragment,
  typeorm: typeormEntitiesModule,
};

export function registerTables(program: Command): void {
  program
    .command('tables')
    .description("evgen's outbox and inbox tables for your data layer's schema tooling")
    .argument('<layer>', `one of ${Object.keys(LAYERS).join(', ')}`)
    .option('--dialect <dialect>', 'postgres or mysql (MySQL and MariaDB)', 'postgres')
    .option('--schema <schema>', 'schema of the tables (PostgreSQL)')
    .option('--outbox-table <name>', 'outbox table name (default outbox_event)')
    .option('--inbox-table <name>', 'inbox table name (default inbox_message)')
    .option(
      '--ordering-table <name>',
      'inbox ordering table name (default inbox_aggregate_version)',
    )
    .option('--idempotency', "include the HTTP idempotency table (migrateIdempotency's)")
    .option(
      '--idempotency-table <name>',
      'idempotency table name (default idempotency_key); implies --idempotency',
    )
    .option('--out <file>', 'write the fragment to this file instead of stdout')
    .action(async (layer: string, options: TablesOptions) => {
      process.exitCode = await runTables(layer, options);
    });
}

export function runTables(layer: string, options: TablesOptions): Promise<number> {
  return reportingProblems(async () => {
    const render = LAYERS[layer];
    if (render === undefined)
      throw refuse({
        code: 'unknown-layer',
        file: '<layer>',
        message: `unknown data layer ${JSON.stringify(layer)}`,
        hint: `use one of ${Object.keys(LAYERS).join(', ')}`,
      });
    const dialect = options.dialect ?? 'postgres';
    if (dialect !== 'postgres' && dialect !== 'mysql')
      throw refuse({
        code: 'unknown-dialect',
        file: '--dialect',
        message: `unknown --dialect ${JSON.stringify(dialect)}`,
        hint: 'use postgres or mysql (MySQL and MariaDB)',
      });
    if (dialect === 'mysql' && options.schema !== undefined)
      throw refuse({
        code: 'schema-on-mysql',
        file: '--schema',
        message: '--schema is for PostgreSQL',
        hint: "on MySQL/MariaDB the tables live in the connection's database; leave --schema out",
      });
    let tables: EvgenTables;
    try {
      tables = evgenTables(dialect, {
        ...(options.schema !== undefined ? { schema: options.schema } : {}),
        ...(options.outboxTable !== undefined ? { outboxTable: options.outboxTable } : {}),
        ...(options.inboxTable !== undefined ? { inboxTable: options.inboxTable } : {}),
        ...(options.orderingTable !== undefined ? { orderingTable: options.orderingTable } : {}),
        ...(options.idempotency === true ? { idempotency: true } : {}),
        ...(options.idempotencyTable !== undefined
          ? { idempotencyTable: options.idempotencyTable }
          : {}),
      });
    } catch (error) {
      throw refuse({
        code: 'invalid-table-name',
        file: '--schema/--…-table',
        message: (error as Error).message,
        hint: 'give a plain SQL identifier to --schema and the --…-table options',
      });
    }
    const text = render(tables);
    if (options.out !== undefined) await writeAtomically(options.out, text);
    else process.stdout.write(text);
    return EXIT_OK;
  });
}
