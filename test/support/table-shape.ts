/**
 * The shape of a schema's tables as the server reports it (information_schema and the catalogs):
 * columns with type, nullability, default, identity and collation; constraints; indexes with their
 * definition. Names of the schema itself are replaced by `<schema>`, so two schemas migrated by
 * different tools compare equal exactly when the tables are the same.
 */
import type pg from 'pg';
import type mysql from 'mysql2/promise';

export type TableShape = Record<string, unknown>;

function unschema(text: string | null, schema: string): string | null {
  return text === null ? null : text.split(schema).join('<schema>');
}

export async function postgresTableShape(pool: pg.Pool, schema: string): Promise<TableShape> {
  const columns = await pool.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, identity_generation,
            character_maximum_length, datetime_precision, collation_name
       FROM information_schema.columns WHERE table_schema = $1
      ORDER BY table_name, column_name`,
    [schema],
  );
  const constraints = await pool.query(
    `SELECT c.relname AS table_name, k.conname, k.contype, pg_get_constraintdef(k.oid) AS def
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 ORDER BY 1, 2`,
    [schema],
  );
  const indexes = await pool.query(
    `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1, 2`,
    [schema],
  );
  return {
    columns: columns.rows.map((r: Record<string, string | null>) => ({
      ...r,
      column_default: unschema(r.column_default ?? null, schema),
    })),
    constraints: constraints.rows,
    indexes: indexes.rows.map((r: Record<string, string>) => ({
      ...r,
      indexdef: unschema(r.indexdef ?? null, schema),
    })),
  };
}

export async function mysqlTableShape(
  connection: mysql.Connection | mysql.Pool,
  database: string,
): Promise<TableShape> {
  const [tables] = await connection.query(
    `SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = ? ORDER BY 1`,
    [database],
  );
  const [columns] = await connection.query(
    `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA,
            CHARACTER_SET_NAME, COLLATION_NAME
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY 1, 2`,
    [database],
  );
  const [indexes] = await connection.query(
    `SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY 1, 2, 3`,
    [database],
  );
  const [checks] = await connection.query(
    `SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
      WHERE CONSTRAINT_SCHEMA = ? ORDER BY 1, 2`,
    [database],
  );
  return { tables, columns, indexes, checks };
}
