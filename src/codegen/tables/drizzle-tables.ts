/**
 * evgen's tables as Drizzle definitions (`drizzle-orm/pg-core` or `drizzle-orm/mysql-core`), for
 * a service's Drizzle schema file: drizzle-kit then sees them as its own tables (no drift, no
 * "delete this table?"), and queries on them are typed.
 */
import {
  tablesTitle,
  type EvgenTable,
  type EvgenTables,
  type TableColumn,
} from './evgen-tables.js';

function pgColumn(column: TableColumn, primary: boolean): string {
  const n = `'${column.name}'`;
  let text: string;
  switch (column.type) {
    case 'bigint':
      text = `bigint(${n}, { mode: 'bigint' })`;
      break;
    case 'integer':
      text = `integer(${n})`;
      break;
    case 'uuid':
      text = `uuid(${n})`;
      break;
    case 'varchar255':
      // Drizzle's pg-core cannot declare a column's COLLATE (and drizzle-kit does not compare it).
      text = `varchar(${n}, { length: 255 })`;
      break;
    case 'jsonb':
      text = `jsonb(${n})`;
      break;
    case 'timestamptz':
      text = `timestamp(${n}, { withTimezone: true })`;
      break;
    default:
      text = `text(${n})`;
  }
  if (column.identity === true) text += '.primaryKey().generatedAlwaysAsIdentity()';
  else if (primary) text += '.primaryKey()';
  if (!column.nullable && column.identity !== true && !primary) text += '.notNull()';
  if (column.default === 'now') text += '.defaultNow()';
  return text + commonDefault(column);
}

/** The defaults both cores spell alike. */
function commonDefault(column: TableColumn): string {
  if (column.default === 'ready') return `.default('READY')`;
  if (column.default === 'zero') return '.default(0)';
  if (column.default === 'one') return '.default(1)';
  if (column.default === 'empty-object') return '.default({})';
  return '';
}

function mysqlColumn(column: TableColumn, primary: boolean): string {
  const n = `'${column.name}'`;
  let text: string;
  switch (column.type) {
    case 'bigint':
      text = `bigint(${n}, { mode: 'bigint' })`;
      break;
    case 'int':
      text = `int(${n})`;
      break;
    case 'char36':
      text = `char(${n}, { length: 36 })`;
      break;
    case 'varchar255':
      text = `varchar(${n}, { length: 255 })`;
      break;
    case 'varchar10':
      text = `varchar(${n}, { length: 10 })`;
      break;
    case 'varchar12':
      text = `varchar(${n}, { length: 12 })`;
      break;
    case 'longtext':
      text = `longtext(${n})`;
      break;
    case 'json':
      text = `json(${n})`;
      break;
    case 'datetime3':
      text = `datetime(${n}, { fsp: 3, mode: 'string' })`;
      break;
    default:
      text = `text(${n})`;
  }
  if (column.identity === true) text += '.autoincrement().primaryKey()';
  else if (primary) text += '.primaryKey()';
  if (!column.nullable && column.identity !== true && !primary) text += '.notNull()';
  // Drizzle's mysql-core cannot declare a column's character set or collation either.
  return text + commonDefault(column);
}

function constName(table: EvgenTable): string {
  return table.model.charAt(0).toLowerCase() + table.model.slice(1);
}

function tableDefinition(table: EvgenTable, pg: boolean, factory: string): string {
  const single = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
  const columns = table.columns
    .map((c) => {
      const primary = c.name === single;
      return `  ${c.property}: ${pg ? pgColumn(c, primary) : mysqlColumn(c, primary)},`;
    })
    .join('\n');
  const property = (name: string) => table.columns.find((c) => c.name === name)?.property ?? name;
  const extras: string[] = [];
  if (table.primaryKey.length > 1) {
    const cols = table.primaryKey.map((c) => `t.${property(c)}`).join(', ');
    extras.push(`  primaryKey({ name: '${table.primaryKeyName}', columns: [${cols}] }),`);
  }
  for (const index of table.indexes) {
    // drizzle-kit reads an index's INCLUDE columns as key columns and Drizzle cannot declare
    // INCLUDE: declared as key columns, the index matches what drizzle-kit reads (and serves the
    // claim scan the same way when drizzle-kit creates it).
    const cols = [...index.columns, ...(index.include ?? [])]
      .map((c) => `t.${property(c)}`)
      .join(', ');
    if (pg && index.unique === true) {
      extras.push(`  unique('${index.name}').on(${cols}),`);
      continue;
    }
    let text = `${index.unique === true ? 'uniqueIndex' : 'index'}('${index.name}').on(${cols})`;
    if (index.where !== undefined) text += `.where(sql\`${index.where}\`)`;
    extras.push(`  ${text},`);
  }
  for (const check of table.checks) extras.push(`  check('${check.name}', sql\`${check.sql}\`),`);
  const third = extras.length > 0 ? `, (t) => [\n${extras.join('\n')}\n]` : '';
  return `export const ${constName(table)} = ${factory}('${table.name}', {\n${columns}\n}${third});`;
}

/** A TypeScript module defining the tables with Drizzle's `pg-core` or `mysql-core`. */
export function drizzleTablesModule(tables: EvgenTables): string {
  const pg = tables.dialect === 'postgres';
  const idempotency = tables.tables.some((t) => t.role === 'idempotency');
  const core = pg ? 'drizzle-orm/pg-core' : 'drizzle-orm/mysql-core';
  const columnImports = pg
    ? [
        'bigint',
        'integer',
        'jsonb',
        'text',
        'timestamp',
        'uuid',
        ...(idempotency ? ['varchar'] : []),
      ]
    : [
        'bigint',
        'char',
        'datetime',
        'int',
        'json',
        'text',
        'varchar',
        ...(idempotency ? ['longtext'] : []),
      ];
  const tableFactory = pg ? 'pgTable' : 'mysqlTable';
  const schemaFactory = pg ? 'pgSchema' : 'mysqlSchema';
  const imports = [
    ...columnImports,
    'check',
    'index',
    'primaryKey',
    ...(pg ? ['unique'] : ['uniqueIndex']),
    tables.schema !== undefined ? schemaFactory : tableFactory,
  ].sort();
  const factory = tables.schema !== undefined ? 'evgenSchema.table' : tableFactory;
  const notes = pg
    ? [
        "// The claim index has INCLUDE columns in evgen's migration, which Drizzle cannot declare;",
        '// drizzle-kit reads them as key columns, so they are declared as such.',
      ]
    : [];
  return [
    `// evgen's ${tablesTitle(tables)} for Drizzle (generated by \`evgen tables drizzle\`).`,
    '// Export them from your Drizzle schema so drizzle-kit treats them as its own; evgen writes',
    '// and reads them with its own statements, so keep the columns as they are.',
    ...notes,
    `import { sql } from 'drizzle-orm';`,
    `import { ${imports.join(', ')} } from '${core}';`,
    '',
    ...(tables.schema !== undefined
      ? [`export const evgenSchema = ${schemaFactory}('${tables.schema}');`, '']
      : []),
    tables.tables.map((table) => tableDefinition(table, pg, factory)).join('\n\n'),
    '',
  ].join('\n');
}
