/**
 * The CDC outbox: a table shaped for Debezium's outbox EventRouter, so Kafka Connect (instead of
 * evgen's polling relay) streams each event from the database log to Kafka as the very record
 * the polling relay would send.
 *
 * One row per event, written by `writeOutboxEvent(..., { mode: 'cdc' })` (or several in one
 * statement by `writeCdcOutboxEvents`) in the business transaction and deleted again in the same
 * transaction: the log keeps the insert (Debezium routes it), the delete is ignored by the router,
 * and the table stays empty, so there is nothing to claim, mark or prune.
 * - PostgreSQL: the table's AFTER INSERT statement trigger deletes what a statement inserted, so
 *   a write is one round trip, and rows inserted by anything else go too.
 * - MySQL/MariaDB: a trigger may not change the table that fired it (error 1442), so the writer
 *   deletes the rows it inserted with a second statement in the same transaction. The binlog
 *   (ROW format) still carries both; the router sends the insert and ignores the delete.
 * Every column is text holding the exact bytes that go on the wire:
 *
 *   id              the messageId (the router's event id, primary key)
 *   topic           the Kafka topic: the catalog's topic of the event type, with the deployment
 *                   prefix (the router's `route.by.field`)
 *   record_key      the record key: the aggregateId
 *   envelope        the record value: the envelope JSON exactly as the writer validated and built
 *                   it (text, not jsonb, which would reorder keys and respace it)
 *   one column per header (CDC_OUTBOX_HEADER_COLUMNS), each placed as that header by the
 *   generated connector config; a NULL column (an optional field the envelope does not have) is
 *   dropped by the DropNullHeaders transform, so it stays absent as with the polling relay.
 */
import type { Database, Transaction } from '../db/database.js';
import type { Envelope } from '../envelope.js';
import { KAFKA_HEADERS, kafkaEnvelopeHeaders } from '../kafka/kafka-record.js';
import { kafkaEventTopic } from '../kafka/topic-names.js';
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from '../telemetry.js';
import { runLockedMigration } from '../db/migration-lock.js';
import { dialectOf, POSTGRES_DIALECT, type SqlDialect } from '../db/sql-dialect.js';
import { qualifiedName, quoteIdentifier } from '../db/sql-identifier.js';
import { CdcServerNotReadyError } from '../errors.js';
import { aggregateVersionTableStatement } from './migration.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';
import {
  awaitingConnectorStatement,
  binlogReaders,
  cdcServerProblem,
  cdcServerProblems,
  markAwaitingConnector,
  mysqlWriteGuard,
  mysqlWriteRefusal,
  type CdcOutboxTables,
  postgresReadinessQuery,
  postgresRefusalBlock,
  postgresWriteRefusal,
  type CdcConnectorOptions,
} from './cdc-server-readiness.js';

/** Default table of the CDC outbox. */
export const DEFAULT_CDC_OUTBOX_TABLE = 'outbox_cdc_event';

/** The columns the EventRouter reads for id, routing, key and value. */
export const CDC_OUTBOX_ROUTING_COLUMNS = Object.freeze({
  id: 'id',
  topic: 'topic',
  key: 'record_key',
  value: 'envelope',
});

/** Headers a caller may add besides evgen's own: the W3C trace context. */
export const CDC_OUTBOX_EXTRA_HEADERS: readonly string[] = [TRACEPARENT_HEADER, TRACESTATE_HEADER];

/**
 * Every header a CDC record can carry, and the column that holds it. Headers that always carry
 * the same value share one column: `ce_id` is the messageId (the `id` column), `ce_subject` the
 * aggregateId (`record_key`, also the record key), `ce_type` the eventType and `ce_time` the
 * occurredAt. The router places a column as several headers; fewer columns are less for the
 * writer to send, the database to store and log, and Debezium to decode per event (measured
 * with 17 columns instead of 23: PostgreSQL ~15% and the Connect worker ~8% less CPU per event).
 */
export const CDC_OUTBOX_HEADER_COLUMNS: readonly {
  readonly header: string;
  readonly column: string;
}[] = Object.freeze(
  [
    [KAFKA_HEADERS.messageId, CDC_OUTBOX_ROUTING_COLUMNS.id],
    [KAFKA_HEADERS.eventType, 'event_type'],
    [KAFKA_HEADERS.schemaVersion, 'schema_version'],
    [KAFKA_HEADERS.aggregateType, 'aggregate_type'],
    [KAFKA_HEADERS.aggregateId, CDC_OUTBOX_ROUTING_COLUMNS.key],
    [KAFKA_HEADERS.aggregateVersion, 'aggregate_version'],
    [KAFKA_HEADERS.occurredAt, 'occurred_at'],
    [KAFKA_HEADERS.traceId, 'trace_id'],
    [KAFKA_HEADERS.correlationId, 'correlation_id'],
    [KAFKA_HEADERS.causationId, 'causation_id'],
    [TRACEPARENT_HEADER, 'traceparent'],
    [TRACESTATE_HEADER, 'tracestate'],
    [KAFKA_HEADERS.contentType, 'content_type'],
    [KAFKA_HEADERS.ceSpecVersion, 'ce_specversion'],
    [KAFKA_HEADERS.ceId, CDC_OUTBOX_ROUTING_COLUMNS.id],
    [KAFKA_HEADERS.ceType, 'event_type'],
    [KAFKA_HEADERS.ceSource, 'ce_source'],
    [KAFKA_HEADERS.ceSubject, CDC_OUTBOX_ROUTING_COLUMNS.key],
    [KAFKA_HEADERS.ceTime, 'occurred_at'],
  ].map(([header, column]) => Object.freeze({ header: header!, column: column! })),
);

/** Headers that are set on every record (the others only when the envelope has the field). */
const REQUIRED_HEADERS = new Set<string>(
  Object.keys(
    kafkaEnvelopeHeaders({
      messageId: '',
      eventType: '',
      schemaVersion: 0,
      aggregateType: '',
      aggregateId: '',
      occurredAt: '',
      payload: null,
    }),
  ),
);

/** A column of the CDC outbox: its name, whether it may be NULL, and how its type differs. */
interface CdcOutboxColumn {
  readonly name: string;
  readonly nullable: boolean;
  /** The MySQL type (PostgreSQL: TEXT for all). */
  readonly mysqlType: string;
}

const ROUTING_COLUMN_NAMES = new Set<string>(Object.values(CDC_OUTBOX_ROUTING_COLUMNS));

/**
 * Every column in table order: the routing columns, then each header column that is not one of
 * them, in the order of its first header. The migrations, the insert statement and the row values
 * all follow this one list.
 */
export const CDC_OUTBOX_COLUMNS: readonly CdcOutboxColumn[] = Object.freeze([
  // The messageId: an RFC 9562 UUID in canonical text form (36 ASCII characters).
  {
    name: CDC_OUTBOX_ROUTING_COLUMNS.id,
    nullable: false,
    mysqlType: 'CHAR(36) CHARACTER SET ascii',
  },
  { name: CDC_OUTBOX_ROUTING_COLUMNS.topic, nullable: false, mysqlType: 'VARCHAR(255)' },
  { name: CDC_OUTBOX_ROUTING_COLUMNS.key, nullable: false, mysqlType: 'TEXT' },
  { name: CDC_OUTBOX_ROUTING_COLUMNS.value, nullable: false, mysqlType: 'LONGTEXT' },
  ...[...new Set(CDC_OUTBOX_HEADER_COLUMNS.map(({ column }) => column))]
    .filter((column) => !ROUTING_COLUMN_NAMES.has(column))
    .map((column) => ({
      name: column,
      // NOT NULL when any header it carries is set on every record.
      nullable: !CDC_OUTBOX_HEADER_COLUMNS.some(
        (c) => c.column === column && REQUIRED_HEADERS.has(c.header),
      ),
      mysqlType: 'TEXT',
    })),
]);

/** One event's row: a value per column of CDC_OUTBOX_COLUMNS, in that order (NULL: no header). */
export type CdcOutboxRow = readonly (string | null)[];

/** Table names of the CDC outbox: `outbox_cdc_event` unless another table is given. */
export function cdcOutboxTableOptions(options: OutboxTableOptions = {}): OutboxTableOptions {
  return { ...options, table: options.table ?? DEFAULT_CDC_OUTBOX_TABLE };
}

/** Where the CDC outbox lives and which connector reads it. */
export interface CdcOutboxMigrationOptions extends OutboxTableOptions, CdcConnectorOptions {
  /**
   * Migrate even though no connector would read the table yet (its slot or publication does not
   * exist, no binlog reader is connected, or a server setting is still wrong): the connector is
   * set up afterwards. Writes are refused until the server's settings and (PostgreSQL) the slot
   * and publication are in place. Without it `migrateCdcOutbox` throws CdcServerNotReadyError.
   * MySQL/MariaDB: the migration that creates the table also refuses writes until the
   * connector's committed offsets are confirmed (confirmCdcConnectorOffsets), whatever this says.
   */
  readonly connectorLater?: boolean;
  /**
   * MySQL/MariaDB: refuse writes until the connector's committed offsets are confirmed even
   * though the table exists: a new connector (another name, another Connect cluster) or one whose
   * offsets were reset has no position and would start at the binlog's end after a crash.
   */
  readonly newConnector?: boolean;
}

/**
 * The CDC outbox schema as idempotent statements (one statement each), for `dialect`
 * (PostgreSQL unless given). PostgreSQL: the connector's slot and publication (`options.slot`,
 * default `evgen_outbox`) are written into the function the table's trigger checks on every
 * insert.
 */
function cdcOutboxMigrationStatements(
  options: CdcOutboxMigrationOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string[] {
  const n = outboxTableNames(cdcOutboxTableOptions(options), dialect);
  const nullability = (c: CdcOutboxColumn) => (c.nullable ? 'NULL' : 'NOT NULL');
  if (dialect.name === 'mysql') {
    const columns = CDC_OUTBOX_COLUMNS.map((c) => `${c.name} ${c.mysqlType} ${nullability(c)}`);
    return [
      ...(n.schema !== undefined
        ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema} DEFAULT CHARACTER SET utf8mb4`]
        : []),
      // utf8mb4 whatever the database's default (MariaDB's is latin1): the columns hold the
      // wire bytes as UTF-8, and Debezium decodes them by the column's character set.
      `CREATE TABLE IF NOT EXISTS ${n.table} (
  ${columns.join(',\n  ')},
  PRIMARY KEY (${CDC_OUTBOX_ROUTING_COLUMNS.id})
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      aggregateVersionTableStatement(n.versionTable, dialect),
    ];
  }
  const r = CDC_OUTBOX_ROUTING_COLUMNS;
  const columns = CDC_OUTBOX_COLUMNS.map(
    (c) => `${c.name} TEXT ${c.name === r.id ? 'PRIMARY KEY' : nullability(c)}`,
  );
  const table = options.table ?? DEFAULT_CDC_OUTBOX_TABLE;
  const deleteFunction = qualifiedName(options.schema, `${table}_delete_inserted`);
  const deleteTrigger = quoteIdentifier(`${table}_delete_inserted`);
  const unreadable = qualifiedName(options.schema, `${table}_unreadable`);
  return [
    ...(n.schema !== undefined ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema}`] : []),
    `CREATE TABLE IF NOT EXISTS ${n.table} (\n  ${columns.join(',\n  ')}\n)`,
    // The rules a connector needs that do not hold (cdc-server-readiness.ts), for the trigger
    // and for `evgen outbox status --cdc`, which thus checks the very slot the writers wait for.
    `CREATE OR REPLACE FUNCTION ${unreadable}()
  RETURNS TABLE (setting text, value text, required text, connector boolean)
  LANGUAGE sql STABLE AS $$
${postgresReadinessQuery(n.table, options)}
$$`,
    // Refuses the statement when no connector would read it (checked per statement: a slot can
    // be dropped and wal_level lowered at any time; measured cost in cdc-server-readiness.ts),
    // then deletes what it inserted, in its transaction: the log keeps the inserts. By the
    // primary key, never a sequential scan: the heap holds every row deleted since the last
    // vacuum, which the planner cannot tell from live rows, and a scan reads them all (measured
    // 0.25 ms per 100 rows on a fresh table, 3.8 ms after 80,000 rows without a vacuum; by the
    // index 0.2 ms throughout, and the index stays small because its scans drop dead entries).
    `CREATE OR REPLACE FUNCTION ${deleteFunction}() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off AS $$
DECLARE
  problem record;
BEGIN
  ${postgresRefusalBlock(unreadable)}
  DELETE FROM ${n.table} AS t USING inserted WHERE t.${r.id} = inserted.${r.id};
  RETURN NULL;
END
$$`,
    `DROP TRIGGER IF EXISTS ${deleteTrigger} ON ${n.table}`,
    `CREATE TRIGGER ${deleteTrigger} AFTER INSERT ON ${n.table}
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ${deleteFunction}()`,
    aggregateVersionTableStatement(n.versionTable),
  ];
}

/**
 * The CDC outbox migration as one SQL script, for a migration tool that runs it once. It checks
 * nothing when run: the writes it sets up are still refused while no connector would read them.
 * MySQL/MariaDB: it also sets the marker that refuses writes until the connector's committed
 * offsets are confirmed (confirmCdcConnectorOffsets), as migrateCdcOutbox does for a new table.
 */
export function cdcOutboxMigrationSql(
  options: CdcOutboxMigrationOptions = {},
  dialect: SqlDialect = POSTGRES_DIALECT,
): string {
  const statements = cdcOutboxMigrationStatements(options, dialect);
  if (dialect.name === 'mysql') {
    const { versionTable } = outboxTableNames(cdcOutboxTableOptions(options), dialect);
    statements.push(awaitingConnectorStatement(versionTable));
  }
  return statements.map((statement) => `${statement};\n`).join('\n');
}

/**
 * Creates the CDC outbox tables if missing, in the database's dialect, under a migration lock.
 * First checks that a connector would read what is written (see cdc-server-readiness.ts) and
 * throws CdcServerNotReadyError, migrating nothing, when not, unless `connectorLater`.
 */
export async function migrateCdcOutbox(
  db: Database,
  options: CdcOutboxMigrationOptions = {},
): Promise<void> {
  const dialect = dialectOf(db);
  const statements = cdcOutboxMigrationStatements(options, dialect);
  const names = outboxTableNames(cdcOutboxTableOptions(options), dialect);
  const problems = await cdcServerProblems(db, names, options);
  // MariaDB keeps no read position for a connector that never ran: without a binlog reader,
  // what is written now would be skipped by a connector started later.
  const noReader = dialect.name === 'mysql' && (await binlogReaders(db)) === 0;
  if (noReader) {
    problems.push(
      cdcServerProblem('binlog reader', 'none connected', 'a connector reading the binlog', true),
    );
  }
  if (problems.length > 0 && options.connectorLater !== true) {
    throw new CdcServerNotReadyError(problems);
  }
  // MariaDB: a new CDC outbox refuses writes until the connector's committed offsets are
  // confirmed (cdc-connector-offsets.ts); a table that exists keeps its state, so redeploying a
  // service does not refuse its writes again.
  const created =
    dialect.name === 'mysql' &&
    (await db.query(`SELECT 1 FROM ${names.table} WHERE 1 = 0`).then(
      () => false,
      () => true,
    ));
  const key = outboxTableNames(cdcOutboxTableOptions(options)).key;
  await runLockedMigration(db, `evgen:migrate:${key}`, statements);
  if (created || (dialect.name === 'mysql' && options.newConnector === true)) {
    await markAwaitingConnector(db, names.versionTable, true);
  }
}

/**
 * The row of one event: the relay's topic, key, envelope JSON and headers (NULL where a header is
 * absent), in CDC_OUTBOX_COLUMNS order.
 */
export function cdcOutboxRow(
  envelope: Envelope,
  topic: string,
  topicPrefix: string | undefined,
  extraHeaders: Readonly<Record<string, string>>,
): CdcOutboxRow {
  const headers = kafkaEnvelopeHeaders(envelope, extraHeaders);
  return CDC_OUTBOX_COLUMNS.map(({ name }, i) => {
    if (name === CDC_OUTBOX_ROUTING_COLUMNS.topic) return kafkaEventTopic(topic, topicPrefix);
    if (name === CDC_OUTBOX_ROUTING_COLUMNS.value) return JSON.stringify(envelope);
    const header = COLUMN_HEADER[i]!;
    return Object.prototype.hasOwnProperty.call(headers, header) ? headers[header]! : null;
  });
}

/** Where a row of `cdcOutboxRow` holds the envelope JSON (the record's value). */
export const CDC_OUTBOX_VALUE_INDEX = CDC_OUTBOX_COLUMNS.findIndex(
  ({ name }) => name === CDC_OUTBOX_ROUTING_COLUMNS.value,
);

/**
 * For each column, the header whose value fills it: the first header placed from it (a shared
 * column's headers hold the same value, see CDC_OUTBOX_HEADER_COLUMNS); `topic` and `envelope`
 * have none.
 */
const COLUMN_HEADER: readonly (string | undefined)[] = CDC_OUTBOX_COLUMNS.map(
  ({ name }) => CDC_OUTBOX_HEADER_COLUMNS.find(({ column }) => column === name)?.header,
);

/**
 * Rows per INSERT: a MySQL statement has a parameter per column and row and must fit in
 * max_allowed_packet (16 MB by default), and a PostgreSQL one binds every row's bytes at once,
 * so big batches go in chunks.
 */
const MAX_ROWS_PER_STATEMENT = 500;
const MAX_BYTES_PER_STATEMENT = 4 * 1024 * 1024;

/** Splits rows into statements of at most MAX_ROWS_PER_STATEMENT rows and about MAX_BYTES. */
function chunks(rows: readonly CdcOutboxRow[]): CdcOutboxRow[][] {
  const result: CdcOutboxRow[][] = [];
  let current: CdcOutboxRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = row.reduce((n, value) => n + (value === null ? 4 : Buffer.byteLength(value)), 0);
    if (
      current.length > 0 &&
      (current.length >= MAX_ROWS_PER_STATEMENT || bytes + size > MAX_BYTES_PER_STATEMENT)
    ) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(row);
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/**
 * Inserts the rows within `tx` and leaves the table as it was. The database log carries the
 * inserts to Debezium when `tx` commits, and nothing when it rolls back. `table` is the quoted
 * table name.
 * - PostgreSQL: one `INSERT … SELECT * FROM unnest($1::text[], …)` per chunk, one text array per
 *   column, so the statement text and its parameters are the same whatever the batch size (a
 *   multi-row VALUES list has a parameter per column and row, each parsed, bound and planned per
 *   call: with 23 columns, 2,300 for 100 rows, measured at about 1.5× the round trip of the
 *   unnest form). The table's trigger deletes the rows within the same statement.
 * - MySQL/MariaDB (no arrays): one multi-row INSERT and one DELETE of their ids per chunk
 *   (mysqlDeleteByIds).
 */
export async function insertCdcOutboxRows(
  tx: Transaction,
  tables: CdcOutboxTables,
  rows: readonly CdcOutboxRow[],
): Promise<void> {
  const dialect = dialectOf(tx);
  const { table } = tables;
  for (const chunk of chunks(rows)) {
    if (dialect.name !== 'mysql') {
      try {
        await tx.query(postgresUnnestInsert(table), columnArrays(chunk));
      } catch (error) {
        throw postgresWriteRefusal(error) ?? error;
      }
      continue;
    }
    const tuples = chunk.map(() => MYSQL_TUPLE);
    await tx.query(
      `INSERT INTO ${table} (${COLUMN_LIST}) VALUES ${tuples.join(', ')}`,
      chunk.flat(),
    );
    await deleteInsertedMysqlRows(tx, tables, chunk);
  }
}

/**
 * MySQL/MariaDB: deletes the rows just inserted. The DELETE matches only while this session's
 * statements reach a connector (mysqlWriteGuard): a shortfall means the inserts would never be
 * read, and the error makes the caller's transaction roll back.
 */
async function deleteInsertedMysqlRows(
  tx: Transaction,
  tables: CdcOutboxTables,
  chunk: readonly CdcOutboxRow[],
): Promise<void> {
  const ids = chunk.map((row) => row[0]);
  const deleted = await tx.query(mysqlDeleteByIds(tables, chunk.length), ids);
  if (deleted.rowCount === chunk.length) return;
  const refusal = await mysqlWriteRefusal(tx, tables.versionTable);
  if (refusal !== undefined) throw refusal;
  throw new Error(
    `the CDC outbox writer deleted ${deleted.rowCount} of the ${chunk.length} rows it inserted into ${tables.table}`,
  );
}

/**
 * The MySQL/MariaDB DELETE of `count` rows by id (`?` each), each found through the primary key,
 * matching nothing unless what this session writes reaches a connector (mysqlWriteGuard: a
 * condition evaluated once per statement, no extra round trip).
 * Not `WHERE id IN (…)`: the table is empty between transactions, so its statistics say one row
 * and the optimizer scans it whole, and until InnoDB's purge catches up the scan also reads every
 * row deleted before (measured: 0.2 ms per 100 rows when purge had caught up, 1.3–2.3 ms behind
 * a steady stream). The ids as a derived table joined first to the outbox forced onto its primary
 * key keep each row one lookup.
 */
function mysqlDeleteByIds(tables: CdcOutboxTables, count: number): string {
  const ids = Array.from({ length: count }, () => 'SELECT ? AS id').join(' UNION ALL ');
  const id = CDC_OUTBOX_ROUTING_COLUMNS.id;
  return `DELETE t FROM (${ids}) AS d STRAIGHT_JOIN ${tables.table} AS t FORCE INDEX (PRIMARY) ON t.${id} = d.id WHERE ${mysqlWriteGuard(tables.versionTable)}`;
}

const COLUMN_LIST = CDC_OUTBOX_COLUMNS.map((c) => c.name).join(', ');
const MYSQL_TUPLE = `(${CDC_OUTBOX_COLUMNS.map(() => '?').join(', ')})`;

/** The PostgreSQL insert of a chunk: one `text[]` parameter per column, unnested into rows. */
function postgresUnnestInsert(table: string): string {
  const arrays = CDC_OUTBOX_COLUMNS.map((_, i) => `$${i + 1}::text[]`).join(', ');
  return `INSERT INTO ${table} (${COLUMN_LIST}) SELECT * FROM unnest(${arrays})`;
}

/** The rows as one array per column (NULL elements stay NULL), for the unnest insert. */
function columnArrays(chunk: readonly CdcOutboxRow[]): (string | null)[][] {
  return CDC_OUTBOX_COLUMNS.map((_, column) => chunk.map((row) => row[column]!));
}
