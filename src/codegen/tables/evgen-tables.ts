/**
 * The tables evgen's migrations create (outbox, aggregate version counter, inbox, inbox ordering,
 * and on request the HTTP idempotency table), described once per dialect so each data layer's
 * schema fragment (Drizzle, Kysely, Prisma, Knex, TypeORM) is rendered from the same columns and
 * indexes. The runtime's SQL (`outboxMigrationStatements`, `inboxMigrationStatements`,
 * `idempotencyMigrationStatements`) stays the source of truth; the fragment tests diff each tool's
 * schema against it on the real PostgreSQL and MariaDB.
 */
import { DEFAULT_INBOX_TABLE, DEFAULT_ORDERING_TABLE } from '../../runtime/inbox/inbox-tables.js';
import { DEFAULT_OUTBOX_TABLE } from '../../runtime/outbox/outbox-table.js';
import { DEFAULT_IDEMPOTENCY_TABLE } from '../../runtime/idempotency/idempotency-table.js';
import { checkIdentifier } from '../../runtime/db/sql-identifier.js';

export type TablesDialect = 'postgres' | 'mysql';

/**
 * A column type as the migration spells it. PostgreSQL: `bigint`, `integer`, `uuid`, `text`,
 * `varchar255`, `jsonb`, `timestamptz`. MySQL/MariaDB: `bigint`, `int`, `char36` (ASCII),
 * `varchar255` (the table's utf8mb4 unless the column has a collation), `varchar10` and
 * `varchar12` (ASCII), `text`, `longtext`, `json`, `datetime3`.
 */
export type ColumnType =
  | 'bigint'
  | 'integer'
  | 'uuid'
  | 'text'
  | 'jsonb'
  | 'timestamptz'
  | 'int'
  | 'char36'
  | 'varchar255'
  | 'varchar10'
  | 'varchar12'
  | 'longtext'
  | 'json'
  | 'datetime3';

export interface TableColumn {
  /** The SQL column name (snake_case). */
  readonly name: string;
  /** The property name a TypeScript data layer uses (camelCase). */
  readonly property: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  /** A server-side default, as the migration writes it. */
  readonly default?: 'now' | 'ready' | 'zero' | 'one' | 'empty-object';
  /**
   * A column collation other than the table's. `C` (PostgreSQL): `COLLATE "C"`, bytewise.
   * `ascii_bin` (MySQL/MariaDB): `CHARACTER SET ascii COLLATE ascii_bin`, case-sensitive.
   */
  readonly collation?: 'C' | 'ascii_bin';
  /** `GENERATED ALWAYS AS IDENTITY` (PostgreSQL) or `AUTO_INCREMENT` (MySQL). */
  readonly identity?: boolean;
}

export interface TableIndex {
  readonly name: string;
  readonly columns: readonly string[];
  readonly unique?: boolean;
  /** PostgreSQL: columns carried in the index (`INCLUDE`). */
  readonly include?: readonly string[];
  /** PostgreSQL: the partial index's predicate, as SQL. */
  readonly where?: string;
}

export interface EvgenTable {
  /** Which table: the name a fragment gives its definition. */
  readonly role: 'outbox' | 'outboxVersion' | 'inbox' | 'inboxOrdering' | 'idempotency';
  /** The SQL table name. */
  readonly name: string;
  /** PascalCase name for a model or entity, e.g. `OutboxEvent`. */
  readonly model: string;
  readonly columns: readonly TableColumn[];
  readonly primaryKey: readonly string[];
  /** The primary key constraint's name (PostgreSQL names it `<table>_pkey`). */
  readonly primaryKeyName: string;
  readonly indexes: readonly TableIndex[];
  /** CHECK constraints: name and SQL. */
  readonly checks: readonly { readonly name: string; readonly sql: string }[];
}

export interface EvgenTablesOptions {
  /** Schema (PostgreSQL) of all the tables; the connection's search_path / database when omitted. */
  readonly schema?: string;
  /** Outbox table name, default `outbox_event` (its counter is `<table>_aggregate_version`). */
  readonly outboxTable?: string;
  /** Inbox table name, default `inbox_message`. */
  readonly inboxTable?: string;
  /** Inbox ordering table name, default `inbox_aggregate_version`. */
  readonly orderingTable?: string;
  /** Include the HTTP idempotency table (`migrateIdempotency`'s); implied by `idempotencyTable`. */
  readonly idempotency?: boolean;
  /** Idempotency table name, default `idempotency_key`; giving it includes the table. */
  readonly idempotencyTable?: string;
}

export interface EvgenTables {
  readonly dialect: TablesDialect;
  readonly schema?: string;
  readonly tables: readonly EvgenTable[];
}

const STATUS_CHECK = "status IN ('READY', 'PROCESSING', 'SENT', 'DEAD')";
const IDEMPOTENCY_STATUS_CHECK = "status IN ('IN_PROGRESS', 'COMPLETED')";

/** snake_case → camelCase (`aggregate_type` → `aggregateType`). */
function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** snake_case → PascalCase (`outbox_event` → `OutboxEvent`). */
function pascal(name: string): string {
  const c = camel(name);
  return c.charAt(0).toUpperCase() + c.slice(1);
}

function column(
  name: string,
  type: ColumnType,
  nullable: boolean,
  extra: Pick<TableColumn, 'default' | 'identity' | 'collation'> = {},
): TableColumn {
  return { name, property: camel(name), type, nullable, ...extra };
}

/**
 * The outbox and inbox tables (and the idempotency table when asked for) with the names `options`
 * gives, as the migration of `dialect` creates them.
 */
export function evgenTables(dialect: TablesDialect, options: EvgenTablesOptions = {}): EvgenTables {
  const outbox = checkIdentifier(options.outboxTable ?? DEFAULT_OUTBOX_TABLE);
  const inbox = checkIdentifier(options.inboxTable ?? DEFAULT_INBOX_TABLE);
  const ordering = checkIdentifier(options.orderingTable ?? DEFAULT_ORDERING_TABLE);
  const schema = options.schema !== undefined ? checkIdentifier(options.schema) : undefined;
  const pg = dialect === 'postgres';
  const key: ColumnType = pg ? 'text' : 'varchar255';
  const uuid: ColumnType = pg ? 'uuid' : 'char36';
  const time: ColumnType = pg ? 'timestamptz' : 'datetime3';
  const json: ColumnType = pg ? 'jsonb' : 'json';
  const int: ColumnType = pg ? 'integer' : 'int';
  // PostgreSQL fills these itself; on MySQL evgen's statements write every value.
  const now = pg ? ({ default: 'now' } as const) : {};
  const outboxTable: EvgenTable = {
    role: 'outbox',
    name: outbox,
    model: pascal(outbox),
    columns: [
      column('id', 'bigint', false, { identity: true }),
      column('event_id', uuid, false),
      column('aggregate_type', key, false),
      column('aggregate_id', key, false),
      column('aggregate_version', 'bigint', true),
      column('event_type', key, false),
      column('schema_version', int, false),
      column('payload', json, false),
      column('occurred_at', time, false),
      column('trace_id', 'text', true),
      column('correlation_id', 'text', true),
      column('causation_id', 'text', true),
      column('headers', json, false, pg ? { default: 'empty-object' } : {}),
      column('status', pg ? 'text' : 'varchar10', false, { default: 'ready' }),
      column('attempts', int, false, { default: 'zero' }),
      column('available_at', time, false, now),
      column('locked_until', time, true),
      column('lease_token', uuid, true),
      column('last_error', 'text', true),
      column('created_at', time, false, now),
      column('sent_at', time, true),
    ],
    primaryKey: ['id'],
    primaryKeyName: `${outbox}_pkey`,
    indexes: pg
      ? [
          { name: `${outbox}_event_id_key`, columns: ['event_id'], unique: true },
          {
            name: `${outbox}_claimable_idx`,
            columns: ['id'],
            include: ['status', 'available_at', 'locked_until'],
            where: "status NOT IN ('SENT', 'DEAD')",
          },
          {
            name: `${outbox}_aggregate_open_idx`,
            columns: ['aggregate_type', 'aggregate_id', 'id'],
            where: "status <> 'SENT'",
          },
          { name: `${outbox}_sent_idx`, columns: ['sent_at'], where: "status = 'SENT'" },
          { name: `${outbox}_lease_idx`, columns: ['lease_token'], where: "status = 'PROCESSING'" },
        ]
      : [
          { name: `${outbox}_event_id_key`, columns: ['event_id'], unique: true },
          { name: `${outbox}_claimable_idx`, columns: ['status', 'id'] },
          {
            name: `${outbox}_aggregate_open_idx`,
            columns: ['aggregate_type', 'aggregate_id', 'status', 'id'],
          },
          { name: `${outbox}_sent_idx`, columns: ['status', 'sent_at'] },
          { name: `${outbox}_lease_idx`, columns: ['lease_token', 'status'] },
        ],
    checks: [{ name: `${outbox}_status_check`, sql: STATUS_CHECK }],
  };
  const versionName = `${outbox}_aggregate_version`;
  const versionTable: EvgenTable = {
    role: 'outboxVersion',
    name: versionName,
    model: pascal(versionName),
    columns: [
      column('aggregate_type', key, false),
      column('aggregate_id', key, false),
      column('version', 'bigint', false),
    ],
    primaryKey: ['aggregate_type', 'aggregate_id'],
    primaryKeyName: `${versionName}_pkey`,
    indexes: [],
    checks: [],
  };
  const inboxTable: EvgenTable = {
    role: 'inbox',
    name: inbox,
    model: pascal(inbox),
    columns: [
      column('message_id', key, false),
      column('consumer', key, false),
      column('received_at', time, false, now),
      column('processed_at', time, true),
    ],
    primaryKey: ['message_id', 'consumer'],
    primaryKeyName: `${inbox}_pkey`,
    indexes: [{ name: `${inbox}_received_at_idx`, columns: ['received_at'] }],
    checks: [],
  };
  const orderingTable: EvgenTable = {
    role: 'inboxOrdering',
    name: ordering,
    model: pascal(ordering),
    columns: [
      column('consumer', key, false),
      column('aggregate_type', key, false),
      column('aggregate_id', key, false),
      column('version', 'bigint', false),
      column('message_id', key, true),
      column('applied_at', time, false, now),
    ],
    primaryKey: ['consumer', 'aggregate_type', 'aggregate_id'],
    primaryKeyName: `${ordering}_pkey`,
    indexes: [],
    checks: [],
  };
  const idempotency =
    options.idempotency === true || options.idempotencyTable !== undefined
      ? [
          idempotencyTable(
            dialect,
            checkIdentifier(options.idempotencyTable ?? DEFAULT_IDEMPOTENCY_TABLE),
          ),
        ]
      : [];
  return {
    dialect,
    ...(schema !== undefined ? { schema } : {}),
    tables: [outboxTable, versionTable, inboxTable, orderingTable, ...idempotency],
  };
}

/** The HTTP idempotency table as `idempotencyMigrationStatements` creates it. */
function idempotencyTable(dialect: TablesDialect, name: string): EvgenTable {
  const pg = dialect === 'postgres';
  const time: ColumnType = pg ? 'timestamptz' : 'datetime3';
  // Keys (and on MySQL fingerprints) compare byte for byte, as the migration declares them.
  const bytewise = { collation: pg ? 'C' : 'ascii_bin' } as const;
  return {
    role: 'idempotency',
    name,
    model: pascal(name),
    columns: [
      // VARCHAR(MAX_IDEMPOTENCY_KEY_LENGTH); the fragment tests compare it with the migration.
      column('idempotency_key', 'varchar255', false, bytewise),
      column('request_hash', pg ? 'text' : 'varchar255', false, pg ? {} : bytewise),
      column('status', pg ? 'text' : 'varchar12', false),
      column('lease_token', pg ? 'uuid' : 'char36', true),
      column('locked_until', time, true),
      column('attempts', pg ? 'integer' : 'int', false, { default: 'one' }),
      column('response', pg ? 'text' : 'longtext', true),
      // PostgreSQL fills it itself; on MySQL evgen's statements write it.
      column('created_at', time, false, pg ? { default: 'now' } : {}),
      column('completed_at', time, true),
    ],
    primaryKey: ['idempotency_key'],
    primaryKeyName: `${name}_pkey`,
    indexes: [{ name: `${name}_created_idx`, columns: ['created_at'] }],
    checks: [{ name: `${name}_status_check`, sql: IDEMPOTENCY_STATUS_CHECK }],
  };
}

/** What a fragment's header calls its tables: `outbox and inbox tables`, or with idempotency. */
export function tablesTitle(tables: EvgenTables): string {
  return tables.tables.some((t) => t.role === 'idempotency')
    ? 'outbox, inbox and idempotency tables'
    : 'outbox and inbox tables';
}

/** The SQL text of a column's default for `dialect`. */
export function defaultSql(column: TableColumn): string | undefined {
  switch (column.default) {
    case 'now':
      return 'now()';
    case 'ready':
      return "'READY'";
    case 'zero':
      return '0';
    case 'one':
      return '1';
    case 'empty-object':
      return "'{}'::jsonb";
    default:
      return undefined;
  }
}

/** The TypeScript type a row's column has when read through a driver (before `| null`). */
export function tsType(column: TableColumn): string {
  switch (column.type) {
    case 'bigint':
      return 'string';
    case 'integer':
    case 'int':
      return 'number';
    case 'jsonb':
    case 'json':
      return 'unknown';
    case 'timestamptz':
      return 'Date';
    case 'datetime3':
      return 'Date | string';
    default:
      return 'string';
  }
}
