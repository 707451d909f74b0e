/**
 * What an operator asks of a CDC outbox. Its rows are deleted in the transaction that wrote them,
 * so there is no backlog in the table: the backlog is the log the connector has not read yet.
 * - PostgreSQL: the lag of its logical replication slot (WAL not confirmed, WAL kept).
 * - MySQL/MariaDB: the server keeps no per-reader position (Debezium keeps its binlog position in
 *   Connect's offsets topic), so the report says whether a replica connection reads the binlog
 *   and where the binlog ends; the connector's lag is in its JMX metrics
 *   (`MilliSecondsBehindSource`).
 * Read-only.
 */
import type { Database } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import { cdcOutboxTableOptions } from './cdc-outbox.js';
import {
  cdcServerProblem,
  cdcServerProblems,
  type CdcServerProblem,
} from './cdc-server-readiness.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

interface CdcReplicationSlot {
  readonly slotName: string;
  /** A connector is attached and reading. */
  readonly active: boolean;
  /** WAL written since the position the connector last confirmed: what it still has to read. */
  readonly lagBytes: number | null;
  /** WAL the server keeps for this slot (grows while the slot is inactive). */
  readonly retainedBytes: number | null;
  /** `reserved`, `extended`, `unreserved` or `lost` (pg_replication_slots.wal_status). */
  readonly walStatus: string | null;
}

export interface CdcOutboxStatusReport {
  /**
   * Why a connector would not read what is written now, each with the setting, its value, the
   * value needed and how to change it; empty when writes go through. PostgreSQL: exactly the
   * check the table's trigger runs on every write (with the slot and publication named at
   * migration).
   */
  readonly problems: readonly CdcServerProblem[];
  /** Rows in the CDC outbox table: 0 when every write deletes its row, as evgen's writer does. */
  readonly rows: number;
  /** PostgreSQL: logical `pgoutput` slots (the one named, or all), sorted by name. */
  readonly slots: readonly CdcReplicationSlot[];
  /** MySQL/MariaDB: the binlog and its readers. */
  readonly binlog?: CdcBinlogStatus;
}

export interface CdcBinlogStatus {
  /**
   * Replica connections reading the binlog (`Binlog Dump` threads): 0 means nobody streams it.
   * More than 0 proves less: a reader that died without closing its connection (a Connect worker
   * SIGKILLed) stays listed until the server next writes to it — compare with the connector's
   * tasks.
   */
  readonly readers: number;
  /** Those connections, by thread id. */
  readonly readerConnections: readonly CdcBinlogReader[];
  /** The binlog file being written and the position at its end (null without the privilege). */
  readonly file: string | null;
  readonly position: number | null;
}

interface CdcBinlogReader {
  /** The server's thread id (`KILL <id>` ends it). */
  readonly id: number;
  readonly user: string;
  /** The replica's address, `host:port` (MariaDB leaves it empty for some replica threads). */
  readonly host: string;
  /** Seconds in its current state: for an idle reader, since the server last sent it anything. */
  readonly stateSeconds: number;
  readonly state: string;
}

export interface CdcOutboxStatusOptions extends OutboxTableOptions {
  /** Only this replication slot (the connector's `slot.name`). */
  readonly slot?: string;
}

/**
 * Why a connector would not read what the CDC outbox's writers commit now (empty: it would;
 * null: this database has no CDC outbox table). PostgreSQL: the table's own check
 * (`<table>_unreadable()`, with the slot and publication named at migration); a table migrated
 * by an evgen without that check is reported as such, with the rules checked for `options.slot`
 * (default `evgen_outbox`). MySQL/MariaDB: the server's and the session's binlog settings and a
 * migration still waiting for a connector.
 */
export async function cdcOutboxProblems(
  db: Database,
  options: CdcOutboxStatusOptions = {},
): Promise<CdcServerProblem[] | null> {
  const dialect = dialectOf(db);
  const tableOptions = cdcOutboxTableOptions(options);
  const names = outboxTableNames(tableOptions, dialect);
  const found = await db.query(`SELECT 1 FROM ${names.table} WHERE 1 = 0`).then(
    () => true,
    () => false,
  );
  if (!found) return null;
  if (dialect.name === 'mysql') return cdcServerProblems(db, names);
  const check = dialect.qualifiedName(options.schema, `${tableOptions.table!}_unreadable`);
  const exists = await db.query<{ found: string | null }>('SELECT to_regproc($1)::text AS found', [
    check,
  ]);
  if (exists.rows[0]?.found == null) {
    return [
      cdcServerProblem(
        'the CDC outbox migration',
        'without the write check',
        'the check that refuses writes no connector would read',
      ),
      ...(await cdcServerProblems(db, names, options.slot ? { slot: options.slot } : {})),
    ];
  }
  const { rows } = await db.query<{
    setting: string;
    value: string;
    required: string;
    connector: boolean;
  }>(`SELECT setting, value, required, connector FROM ${check}()`);
  return rows.map((row) => cdcServerProblem(row.setting, row.value, row.required, row.connector));
}

export async function cdcOutboxStatus(
  db: Database,
  options: CdcOutboxStatusOptions = {},
): Promise<CdcOutboxStatusReport> {
  const dialect = dialectOf(db);
  const { table } = outboxTableNames(cdcOutboxTableOptions(options), dialect);
  // A missing table fails the row count below, as for the polling relay's outbox.
  const problems = (await cdcOutboxProblems(db, options)) ?? [];
  if (dialect.name === 'mysql') return { problems, ...(await mysqlCdcStatus(db, table)) };
  const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
  const slots = await db.query<{
    slot_name: string;
    active: boolean;
    lag: string | null;
    retained: string | null;
    wal_status: string | null;
  }>(
    `SELECT slot_name, active,
            pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS lag,
            pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text AS retained,
            wal_status
       FROM pg_replication_slots
      WHERE slot_type = 'logical' AND plugin = 'pgoutput' AND ($1::text IS NULL OR slot_name = $1)
      ORDER BY slot_name`,
    [options.slot ?? null],
  );
  const bytes = (value: string | null) => (value === null ? null : Number(value));
  return {
    problems,
    rows: Number(rows.rows[0]?.n ?? 0),
    slots: slots.rows.map((slot) => ({
      slotName: slot.slot_name,
      active: slot.active,
      lagBytes: bytes(slot.lag),
      retainedBytes: bytes(slot.retained),
      walStatus: slot.wal_status,
    })),
  };
}

async function mysqlCdcStatus(
  db: Database,
  table: string,
): Promise<Omit<CdcOutboxStatusReport, 'problems'>> {
  const rows = await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${table}`);
  const readers = await db.query<{
    ID: string | number;
    USER: string;
    HOST: string;
    TIME: string | number;
    STATE: string | null;
  }>(
    'SELECT ID, USER, HOST, TIME, STATE FROM information_schema.PROCESSLIST ' +
      "WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY ID",
  );
  // Needs the BINLOG MONITOR (MariaDB) or REPLICATION CLIENT (MySQL) privilege.
  const master = await db
    .query<{ File: string; Position: string | number }>('SHOW MASTER STATUS')
    .catch(() => undefined);
  const end = master?.rows[0];
  return {
    rows: Number(rows.rows[0]?.n ?? 0),
    slots: [],
    binlog: {
      readers: readers.rows.length,
      readerConnections: readers.rows.map((row) => ({
        id: Number(row.ID),
        user: row.USER,
        host: row.HOST,
        stateSeconds: Number(row.TIME),
        state: row.STATE ?? '',
      })),
      file: end?.File ?? null,
      position: end === undefined ? null : Number(end.Position),
    },
  };
}
