/**
 * evgen's tables for Kysely: the `Database` interfaces (merge them into your `DB`) and a Kysely
 * migration (`up`/`down`) that creates them exactly as evgen's own migration does, for your
 * Kysely `Migrator` folder. Columns go through Kysely's schema builder; what it cannot say
 * (PostgreSQL's partial and covering indexes, MySQL's table collation and ASCII columns) is
 * written as `sql` in the same migration.
 */
import {
  defaultSql,
  tablesTitle,
  tsType,
  type EvgenTable,
  type EvgenTables,
  type TableColumn,
} from './evgen-tables.js';

function interfaceOf(table: EvgenTable): string {
  const fields = table.columns.map((c) => {
    let type = tsType(c);
    if (c.nullable) type += ' | null';
    const generated = c.identity === true || c.default !== undefined;
    // Kysely's Generated<T>: optional on insert, present on select.
    if (generated) type = `Generated<${type}>`;
    return `  ${c.name}: ${type};`;
  });
  return `export interface ${table.model}Table {\n${fields.join('\n')}\n}`;
}

function dataType(column: TableColumn): string {
  // Kysely's column builder has no COLLATE: a collated column's type is written as `sql`.
  if (column.collation === 'C' && column.type === 'varchar255')
    return 'sql`varchar(255) collate "C"`';
  if (column.collation === 'ascii_bin' && column.type === 'varchar255')
    return 'sql`varchar(255) character set ascii collate ascii_bin`';
  switch (column.type) {
    case 'bigint':
      return `'bigint'`;
    case 'integer':
      return `'integer'`;
    case 'int':
      return `'integer'`;
    case 'uuid':
      return `'uuid'`;
    case 'jsonb':
      return `'jsonb'`;
    case 'json':
      return `'json'`;
    case 'timestamptz':
      return `'timestamptz'`;
    case 'datetime3':
      return `sql\`datetime(3)\``;
    case 'char36':
      return `sql\`char(36) character set ascii\``;
    case 'varchar255':
      return `'varchar(255)'`;
    case 'varchar10':
      return `sql\`varchar(10) character set ascii\``;
    case 'varchar12':
      return `sql\`varchar(12) character set ascii\``;
    case 'longtext':
      return `sql\`longtext\``;
    default:
      return `'text'`;
  }
}

function columnCall(column: TableColumn, pg: boolean, primary: boolean): string {
  const modifiers: string[] = [];
  if (column.identity === true)
    modifiers.push(
      pg ? 'col.generatedAlwaysAsIdentity().primaryKey()' : 'col.autoIncrement().primaryKey()',
    );
  else if (primary) modifiers.push('col.primaryKey()');
  if (!column.nullable && column.identity !== true && !primary) modifiers.push('col.notNull()');
  const def = defaultSql(column);
  if (def !== undefined) modifiers.push(`col.defaultTo(sql\`${def}\`)`);
  const chain = modifiers.map((m) => m.slice('col'.length)).join('');
  const callback = chain.length > 0 ? `, (col) => col${chain}` : '';
  return `.addColumn('${column.name}', ${dataType(column)}${callback})`;
}

function createTable(
  table: EvgenTable,
  pg: boolean,
  schemaCall: string,
  schema: string | undefined,
): string {
  const lines = [`  await db${schemaCall}.schema`, `    .createTable('${table.name}')`];
  const single = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
  for (const column of table.columns)
    lines.push(`    ${columnCall(column, pg, column.name === single)}`);
  if (table.primaryKey.length > 1)
    lines.push(
      `    .addPrimaryKeyConstraint('${table.primaryKeyName}', [${table.primaryKey.map((c) => `'${c}'`).join(', ')}])`,
    );
  for (const index of table.indexes)
    if (index.unique === true)
      lines.push(
        `    .addUniqueConstraint('${index.name}', [${index.columns.map((c) => `'${c}'`).join(', ')}])`,
      );
  for (const check of table.checks)
    lines.push(`    .addCheckConstraint('${check.name}', sql\`${check.sql}\`)`);
  if (!pg)
    lines.push('    .modifyEnd(sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`)');
  lines.push('    .execute();');
  const target = schema !== undefined ? `'${schema}', '${table.name}'` : `'${table.name}'`;
  const indexes = table.indexes
    .filter((index) => index.unique !== true)
    .map((index) => {
      const columns = index.columns.map((c) => `'${c}'`).join(', ');
      if (index.include === undefined && index.where === undefined)
        return `  await db${schemaCall}.schema.createIndex('${index.name}').on('${table.name}').columns([${columns}]).execute();`;
      // Kysely's index builder has no INCLUDE; the partial, covering index is written as SQL.
      const include = index.include !== undefined ? ` INCLUDE (${index.include.join(', ')})` : '';
      const where = index.where !== undefined ? ` WHERE ${index.where}` : '';
      return `  await sql\`CREATE INDEX \${sql.id('${index.name}')} ON \${sql.id(${target})} (${index.columns.join(', ')})${include}${where}\`.execute(db);`;
    });
  return [lines.join('\n'), ...indexes].join('\n');
}

/** A TypeScript module: the tables' Kysely interfaces, `EvgenTables`, and a migration's `up`/`down`. */
export function kyselyTablesModule(tables: EvgenTables): string {
  const pg = tables.dialect === 'postgres';
  const schemaCall = tables.schema !== undefined ? `.withSchema('${tables.schema}')` : '';
  const qualified = (name: string) =>
    tables.schema !== undefined ? `${tables.schema}.${name}` : name;
  const dbFields = tables.tables.map((t) => `  '${qualified(t.name)}': ${t.model}Table;`);
  const up = tables.tables.map((t) => createTable(t, pg, schemaCall, tables.schema)).join('\n');
  const down = [...tables.tables]
    .reverse()
    .map((t) => `  await db${schemaCall}.schema.dropTable('${t.name}').ifExists().execute();`)
    .join('\n');
  return [
    `// evgen's ${tablesTitle(tables)} for Kysely (generated by \`evgen tables kysely\`): the`,
    '// interfaces to merge into your Database type, and a migration for your Migrator folder that',
    "// creates them as evgen's migration does (evgen's migrate functions then find them and do",
    '// nothing). evgen writes and reads these tables with its own statements; keep the columns.',
    "import { sql, type Generated, type Kysely } from 'kysely';",
    '',
    tables.tables.map(interfaceOf).join('\n\n'),
    '',
    '/** Merge into your database interface: `interface DB extends EvgenTables { … }`. */',
    `export interface EvgenTables {\n${dbFields.join('\n')}\n}`,
    '',
    ...(tables.schema !== undefined && pg
      ? [
          '// eslint-disable-next-line @typescript-eslint/no-explicit-any',
          `export async function up(db: Kysely<any>): Promise<void> {`,
          `  await db.schema.createSchema('${tables.schema}').ifNotExists().execute();`,
        ]
      : [
          '// eslint-disable-next-line @typescript-eslint/no-explicit-any',
          `export async function up(db: Kysely<any>): Promise<void> {`,
        ]),
    up,
    '}',
    '',
    '// eslint-disable-next-line @typescript-eslint/no-explicit-any',
    `export async function down(db: Kysely<any>): Promise<void> {`,
    down,
    '}',
    '',
  ].join('\n');
}
