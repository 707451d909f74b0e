/**
 * evgen's tables as a Knex migration (`up`/`down`) for a service's Knex migrations folder: it
 * creates them exactly as evgen's own migration does (migrateOutbox/migrateInbox/
 * migrateIdempotency then find them and do nothing), so the service's migration history owns them. Knex's schema builder cannot say
 * `GENERATED ALWAYS AS IDENTITY`, an index's INCLUDE or a signed AUTO_INCREMENT key: those are
 * `specificType`/`knex.raw`.
 */
import {
  defaultSql,
  tablesTitle,
  type EvgenTable,
  type EvgenTables,
  type TableColumn,
} from './evgen-tables.js';

function columnCall(column: TableColumn, pg: boolean, primary: boolean): string {
  const n = `'${column.name}'`;
  if (column.identity === true)
    return pg
      ? `t.specificType(${n}, 'bigint GENERATED ALWAYS AS IDENTITY').primary();`
      : `t.specificType(${n}, 'bigint NOT NULL AUTO_INCREMENT PRIMARY KEY');`;
  let call: string;
  switch (column.collation !== undefined ? 'collated' : column.type) {
    case 'collated':
      // Knex's collate() is MySQL's only and comes without the character set: written as a type.
      call = `t.specificType(${n}, '${collatedType(column)}')`;
      break;
    case 'bigint':
      call = `t.bigInteger(${n})`;
      break;
    case 'integer':
    case 'int':
      call = `t.integer(${n})`;
      break;
    case 'uuid':
      call = `t.uuid(${n})`;
      break;
    case 'jsonb':
      call = `t.jsonb(${n})`;
      break;
    case 'json':
      call = `t.json(${n})`;
      break;
    case 'timestamptz':
      call = `t.timestamp(${n}, { useTz: true })`;
      break;
    case 'datetime3':
      call = `t.datetime(${n}, { precision: 3 })`;
      break;
    case 'char36':
      call = `t.specificType(${n}, 'char(36) character set ascii')`;
      break;
    case 'varchar255':
      call = `t.string(${n}, 255)`;
      break;
    case 'varchar10':
      call = `t.specificType(${n}, 'varchar(10) character set ascii')`;
      break;
    case 'varchar12':
      call = `t.specificType(${n}, 'varchar(12) character set ascii')`;
      break;
    case 'longtext':
      call = `t.text(${n}, 'longtext')`;
      break;
    default:
      call = `t.text(${n})`;
  }
  call += primary ? '.primary()' : column.nullable ? '.nullable()' : '.notNullable()';
  const def = defaultSql(column);
  if (def !== undefined)
    call +=
      column.default === 'ready'
        ? `.defaultTo('READY')`
        : column.default === 'zero' || column.default === 'one'
          ? `.defaultTo(${def})`
          : `.defaultTo(knex.raw("${def}"))`;
  return `${call};`;
}

/** A collated column's SQL type (only VARCHAR(255) keys are collated). */
function collatedType(column: TableColumn): string {
  const type = column.type === 'varchar255' ? 'varchar(255)' : column.type;
  return column.collation === 'C'
    ? `${type} collate "C"`
    : `${type} character set ascii collate ascii_bin`;
}

function createTable(table: EvgenTable, pg: boolean, schemaCall: string, schema?: string): string {
  const single = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
  const body = table.columns.map((c) => `    ${columnCall(c, pg, c.name === single)}`);
  const quoted = (cols: readonly string[]) => cols.map((c) => `'${c}'`).join(', ');
  if (table.primaryKey.length > 1)
    body.push(`    t.primary([${quoted(table.primaryKey)}], '${table.primaryKeyName}');`);
  const raw: string[] = [];
  const target = schema !== undefined ? `"${schema}"."${table.name}"` : `"${table.name}"`;
  for (const index of table.indexes) {
    if (index.unique === true) {
      body.push(
        `    t.unique([${quoted(index.columns)}], { indexName: '${index.name}', useConstraint: true });`,
      );
    } else if (pg && (index.include !== undefined || index.where !== undefined)) {
      // Knex's index builder has no INCLUDE; the partial (and covering) index is written as SQL.
      const include = index.include !== undefined ? ` INCLUDE (${index.include.join(', ')})` : '';
      const where = index.where !== undefined ? ` WHERE ${index.where}` : '';
      raw.push(
        `  await knex.raw(\`CREATE INDEX "${index.name}" ON ${target} (${index.columns.join(', ')})${include}${where}\`);`,
      );
    } else {
      body.push(`    t.index([${quoted(index.columns)}], '${index.name}');`);
    }
  }
  for (const check of table.checks)
    body.push(`    t.check(\`${check.sql}\`, [], '${check.name}');`);
  if (!pg)
    body.push(
      `    t.engine('InnoDB');`,
      `    t.charset('utf8mb4');`,
      `    t.collate('utf8mb4_bin');`,
    );
  return [
    `  await knex.schema${schemaCall}.createTable('${table.name}', (t) => {`,
    ...body,
    '  });',
    ...raw,
  ].join('\n');
}

/** A Knex migration module creating (`up`) and dropping (`down`) the tables. */
export function knexMigrationModule(tables: EvgenTables): string {
  const pg = tables.dialect === 'postgres';
  const schemaCall = tables.schema !== undefined ? `.withSchema('${tables.schema}')` : '';
  const up = tables.tables.map((t) => createTable(t, pg, schemaCall, tables.schema)).join('\n');
  const down = [...tables.tables]
    .reverse()
    .map((t) => `  await knex.schema${schemaCall}.dropTableIfExists('${t.name}');`)
    .join('\n');
  return [
    `// evgen's ${tablesTitle(tables)} as a Knex migration (generated by \`evgen tables knex\`).`,
    "// It creates them as evgen's migration does; evgen writes and reads them with its own",
    '// statements, so keep the columns as they are.',
    "import type { Knex } from 'knex';",
    '',
    'export async function up(knex: Knex): Promise<void> {',
    ...(tables.schema !== undefined && pg
      ? [`  await knex.schema.createSchemaIfNotExists('${tables.schema}');`]
      : []),
    up,
    '}',
    '',
    'export async function down(knex: Knex): Promise<void> {',
    down,
    '}',
    '',
  ].join('\n');
}
