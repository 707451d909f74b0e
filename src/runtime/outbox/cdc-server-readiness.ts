/**
 * Whether a connector is guaranteed to read what the CDC outbox commits. The CDC writer deletes
 * its rows in the transaction that writes them, so an event exists only in the database log: on
 * a server whose log a connector cannot read, a committed event is gone without a trace. Each
 * rule below is a setting (or a piece of the connector's set-up) with the value the connector
 * needs; a problem names the setting, its value, the value needed and how to change it.
 *
 * PostgreSQL (Debezium's pgoutput connector):
 * - `wal_level` must be `logical` (a restart is needed to change it);
 * - the connector's logical replication slot must exist on this database, decode with pgoutput,
 *   be past its creation (a consistent start point) and not be lost: changes committed before the
 *   slot exists are never decoded;
 * - its publication (the connector's `publication.name`, by default the slot's name) must
 *   publish inserts into the outbox table.
 *   The slot and publication are named at migration (default `evgen_outbox`, the slot of the
 *   default connector `evgen-outbox`) and checked by the table's trigger on every insert
 *   statement, so every writer, evgen's or not, is refused.
 * MySQL/MariaDB (Debezium reads the binlog as a replica):
 * - `log_bin` ON (read-only: start the server with `--log-bin`, a restart);
 * - `binlog_format` ROW and `binlog_row_image` FULL, for this session (what a statement is logged
 *   with) and globally (what new sessions start with);
 * - `sql_log_bin` 1 in the writing session;
 * - a connector with a committed position: MariaDB keeps no read position for a binlog reader;
 *   Debezium keeps it in Kafka Connect's offsets topic, and a connector that has not committed
 *   one yet restarts after a worker crash with a new `no_data` snapshot at the binlog's end,
 *   skipping what was written since it first started (measured: everything written before the
 *   crash, while the worker was down, and after its restart until the new snapshot). So the
 *   migration that creates the table leaves a marker that refuses writes until the connector's
 *   committed offsets are confirmed through Connect's REST API (cdc-connector-offsets.ts). A
 *   binlog reader proves nothing: it is connected long before the first commit, and a killed
 *   worker's `Binlog Dump` thread stays in the process list until the server next writes to it.
 *   These are checked by the writer's DELETE on every write (its WHERE clause: no extra round
 *   trip); only a refused write reads the settings again, to name the wrong one.
 *
 * Checked per statement, not cached per pool or connection: a slot can be dropped, a server
 * restarted with another wal_level under a pool that reconnects, and a session can turn
 * sql_log_bin off at any time; a cache would miss each for as long as it lives. Measured cost
 * (docs/guides/cdc-server-settings.md): PostgreSQL 76–127 µs per statement on a loaded 2-core
 * machine (0.36 → 0.43 ms per one-event transaction, 2.78 → 2.88 ms per 100-event one at the
 * lightest load); MariaDB no round trip, 0.25 µs for the variables plus one key lookup.
 */
import type { Queryable } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import { CdcServerNotReadyError, type CdcServerProblem } from '../errors.js';

export type { CdcServerProblem };

/** The replication slot (and publication) of the default connector `evgen-outbox`. */
const DEFAULT_CDC_SLOT = 'evgen_outbox';

/**
 * The slot Debezium's PostgreSQL connector uses by default for a connector name: evgen's
 * connector config sets `slot.name` and `publication.name` to this.
 */
export function cdcSlotName(connectorName: string): string {
  return connectorName.replace(/[^a-z0-9_]/gi, '_').toLowerCase();
}

/** Which connector the CDC outbox waits for (PostgreSQL: its slot and publication). */
export interface CdcConnectorOptions {
  /** The connector's replication slot (`slot.name`); default `evgen_outbox`. */
  readonly slot?: string;
  /** The connector's publication (`publication.name`); default: the slot's name. */
  readonly publication?: string;
}

const SLOT_NAME = /^[a-z0-9_]{1,63}$/;
const PUBLICATION_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** The slot and publication names, checked (they are written into SQL as literals). */
function cdcConnectorNames(options: CdcConnectorOptions = {}): {
  slot: string;
  publication: string;
} {
  const slot = options.slot ?? DEFAULT_CDC_SLOT;
  const publication = options.publication ?? slot;
  if (!SLOT_NAME.test(slot)) {
    throw new TypeError(
      `replication slot name ${JSON.stringify(slot)}: PostgreSQL allows lower-case letters, digits and _ (at most 63)`,
    );
  }
  if (!PUBLICATION_NAME.test(publication)) {
    throw new TypeError(
      `publication name ${JSON.stringify(publication)} is not a plain identifier`,
    );
  }
  return { slot, publication };
}

/** How to fix each rule, by the setting's kind (the first word of `setting`). */
const REMEDIES: Readonly<Record<string, string>> = {
  wal_level:
    "set wal_level = logical (ALTER SYSTEM SET wal_level = 'logical', or postgresql.conf) and restart the server: it cannot change while the server runs",
  'replication slot':
    "start the connector (Debezium creates its slot.name on its first start; evgen's connector config names it after the connector), or migrate the CDC outbox with the slot the connector uses (option slot); a lost slot must be dropped (pg_drop_replication_slot) and the connector set up again",
  publication:
    "start the connector (publication.autocreate.mode=filtered creates it), or CREATE PUBLICATION <name> FOR TABLE <outbox> WITH (publish = 'insert') / ALTER PUBLICATION <name> ADD TABLE <outbox>",
  log_bin:
    'start the server with --log-bin (and a --server-id): log_bin is read-only, so this needs a server restart',
  binlog_format:
    "SET GLOBAL binlog_format = 'ROW' (sessions opened afterwards) and binlog_format = ROW in the server's config; a session that changed its own must SET SESSION binlog_format = 'ROW' (or reconnect)",
  binlog_row_image:
    "SET GLOBAL binlog_row_image = 'FULL' (sessions opened afterwards) and binlog_row_image = FULL in the server's config; a session that changed its own must SET SESSION binlog_row_image = 'FULL' (or reconnect)",
  sql_log_bin:
    'this session turned binary logging off (SET sql_log_bin = 0), so its writes never reach the binlog: SET sql_log_bin = 1, or write on a connection that has not turned it off',
  'the CDC outbox migration':
    'run migrateCdcOutbox again (it is idempotent) with the slot the connector uses: the table was migrated by an evgen that did not check its writes',
  'binlog reader':
    "start the connector: MariaDB keeps no read position for a connector that never ran, so Debezium (snapshot.mode=no_data) starts at the binlog's end and never reads what was written before",
  'connector offsets':
    "start the connector (evgen's connector config sends a heartbeat, so it commits a position without any event) and, once Kafka Connect has committed its source offsets (offset.flush.interval.ms, 60 s by default), confirm them: evgen outbox cdc-confirm --connect-url <url> --connector <name>, or confirmCdcConnectorOffsets(db, { connectUrl, connector }); until then a worker crash restarts the connector at the binlog's end",
};

/** A problem with the remedy for its kind of setting. */
export function cdcServerProblem(
  setting: string,
  value: string,
  required: string,
  connector = false,
): CdcServerProblem {
  const kind = Object.keys(REMEDIES).find((k) => setting === k || setting.startsWith(`${k} `));
  return { setting, value, required, remedy: REMEDIES[kind ?? ''] ?? '', connector };
}

/** A SQL string literal of a name checked above (no quote can be in it). */
const literal = (text: string) => `'${text}'`;

/**
 * PostgreSQL: one row per rule that does not hold (setting, value, required, connector), in
 * rule order. `table` is the outbox table's quoted name (resolved by the caller's search_path; a
 * table that does not exist yet is in no publication). The same SELECT is the body of the
 * outbox's `<table>_unreadable` function, which its trigger calls on every insert.
 */
export function postgresReadinessQuery(table: string, options: CdcConnectorOptions = {}): string {
  const { slot, publication } = cdcConnectorNames(options);
  const slotName = literal(slot);
  const publicationName = literal(publication);
  return `SELECT setting, value, required, connector FROM (
  SELECT 1 AS rule, 'wal_level'::text AS setting, current_setting('wal_level') AS value,
         'logical'::text AS required, false AS connector
  UNION ALL
  SELECT 2, 'replication slot ' || ${slotName},
         COALESCE((SELECT CASE
             WHEN s.slot_type <> 'logical' THEN 'a physical slot'
             WHEN s.database IS DISTINCT FROM current_database() THEN 'on database ' || s.database
             WHEN s.plugin IS DISTINCT FROM 'pgoutput' THEN 'decoding with ' || s.plugin
             WHEN s.wal_status = 'lost' THEN 'lost (the WAL it needed was removed)'
             WHEN s.confirmed_flush_lsn IS NULL THEN 'still being created'
             ELSE 'ready' END
           FROM pg_replication_slots s WHERE s.slot_name = ${slotName}), 'missing'),
         'a logical pgoutput slot of this database', true
  UNION ALL
  SELECT 3, 'publication ' || ${publicationName},
         COALESCE((SELECT CASE
             WHEN NOT p.pubinsert THEN 'not publishing inserts'
             WHEN p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_rel r
                  WHERE r.prpubid = p.oid AND r.prrelid = to_regclass(${literal(table.replace(/'/g, "''"))}))
               THEN 'ready'
             ELSE 'without the outbox table' END
           FROM pg_publication p WHERE p.pubname = ${publicationName}), 'missing'),
         'a publication of inserts into the outbox table', true
) rules
WHERE value <> CASE WHEN rule = 1 THEN 'logical' ELSE 'ready' END
ORDER BY rule`;
}

interface ProblemRow {
  readonly setting: string;
  readonly value: string;
  readonly required: string;
  readonly connector: boolean | number | string;
}

const toProblem = (row: ProblemRow) =>
  cdcServerProblem(
    row.setting,
    row.value,
    row.required,
    row.connector === true || row.connector === 't',
  );

/**
 * MySQL/MariaDB: the marker row that keeps writes refused after the migration that created the
 * CDC outbox, until the connector's committed offsets are confirmed. It lives in the outbox's
 * aggregate-version table (which every CDC outbox has and Debezium does not capture) under an
 * aggregate type no catalog can name.
 */
const AWAITING_CONNECTOR = { type: 'evgen:cdc', id: 'awaiting-connector' } as const;

/**
 * MySQL/MariaDB: the condition under which this session's statements reach a connector: the
 * binlog is on, this session logs, as full rows, and no migration is still waiting for a
 * connector. The writer's DELETE carries it as its WHERE clause (constant for the statement,
 * evaluated once, no extra round trip), so a shortfall of deleted rows means "refused".
 */
export function mysqlWriteGuard(versionTable: string): string {
  return `@@GLOBAL.log_bin = 1 AND @@SESSION.sql_log_bin = 1 AND @@SESSION.binlog_format = 'ROW' AND @@SESSION.binlog_row_image = 'FULL' AND NOT EXISTS (SELECT 1 FROM ${versionTable} AS awaiting WHERE awaiting.aggregate_type = '${AWAITING_CONNECTOR.type}' AND awaiting.aggregate_id = '${AWAITING_CONNECTOR.id}')`;
}

/**
 * MySQL/MariaDB: the settings that do not hold. `session`: what decides whether this session's
 * statements reach the binlog as full rows (what the writer's guard checks); `server`: also the
 * global defaults new sessions start with.
 */
async function mysqlSettingProblems(
  db: Queryable,
  scope: 'session' | 'server',
): Promise<CdcServerProblem[]> {
  const { rows } = await db.query<Record<string, string | number | null>>(
    `SELECT @@GLOBAL.log_bin AS log_bin, @@SESSION.sql_log_bin AS sql_log_bin,
            @@SESSION.binlog_format AS session_format, @@GLOBAL.binlog_format AS global_format,
            @@SESSION.binlog_row_image AS session_image, @@GLOBAL.binlog_row_image AS global_image`,
  );
  const v = rows[0] ?? {};
  const on = (value: unknown) => Number(value) === 1;
  const problems: CdcServerProblem[] = [];
  if (!on(v.log_bin)) problems.push(cdcServerProblem('log_bin', 'OFF', 'ON'));
  if (!on(v.sql_log_bin)) problems.push(cdcServerProblem('sql_log_bin', '0', '1 (this session)'));
  const both = (name: string, required: string, session: unknown, global: unknown) => {
    if (String(session) !== required) {
      problems.push(cdcServerProblem(name, String(session), `${required} (this session)`));
    } else if (scope === 'server' && String(global) !== required) {
      problems.push(cdcServerProblem(name, `${String(global)} (global)`, `${required} (global)`));
    }
  };
  both('binlog_format', 'ROW', v.session_format, v.global_format);
  both('binlog_row_image', 'FULL', v.session_image, v.global_image);
  return problems;
}

/**
 * MySQL/MariaDB: replica connections reading the binlog (`Binlog Dump` threads). Another user's
 * connection is visible only with the PROCESS privilege.
 */
export async function binlogReaders(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
  );
  return Number(rows[0]?.n ?? 0);
}

async function awaitingConnector(db: Queryable, versionTable: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 AS awaiting FROM ${versionTable} WHERE aggregate_type = ? AND aggregate_id = ?`,
    [AWAITING_CONNECTOR.type, AWAITING_CONNECTOR.id],
  );
  return rows.length > 0;
}

/** MySQL/MariaDB: the marker is set: no committed connector offsets confirmed yet. */
export const NO_CONFIRMED_OFFSETS = (): CdcServerProblem =>
  cdcServerProblem(
    'connector offsets',
    'none confirmed since the CDC outbox was created',
    'source offsets committed by the connector, confirmed (evgen outbox cdc-confirm)',
    true,
  );

/**
 * MySQL/MariaDB: sets (`awaiting`) or clears the marker that refuses writes until the
 * connector's committed offsets are confirmed.
 */
export async function markAwaitingConnector(
  db: Queryable,
  versionTable: string,
  awaiting: boolean,
): Promise<void> {
  const key = [AWAITING_CONNECTOR.type, AWAITING_CONNECTOR.id];
  await db.query(
    awaiting
      ? `INSERT IGNORE INTO ${versionTable} (aggregate_type, aggregate_id, version) VALUES (?, ?, 0)`
      : `DELETE FROM ${versionTable} WHERE aggregate_type = ? AND aggregate_id = ?`,
    key,
  );
}

/** MySQL/MariaDB: the statement that sets the marker, as SQL text (for a migration script). */
export function awaitingConnectorStatement(versionTable: string): string {
  return `INSERT IGNORE INTO ${versionTable} (aggregate_type, aggregate_id, version) VALUES ('${AWAITING_CONNECTOR.type}', '${AWAITING_CONNECTOR.id}', 0)`;
}

/** Quoted names of the CDC outbox's table and its aggregate-version table. */
export interface CdcOutboxTables {
  readonly table: string;
  readonly versionTable: string;
}

/**
 * Why the CDC outbox's writers would refuse a write now, each with the setting, its value, the
 * value needed and how to change it; empty when a connector is guaranteed to read what is
 * written. PostgreSQL: wal_level and the connector's slot and publication. MySQL/MariaDB: the
 * session's and the global binlog settings, and a migration still waiting for a connector.
 * Read-only.
 */
export async function cdcServerProblems(
  db: Queryable,
  tables: CdcOutboxTables,
  options: CdcConnectorOptions = {},
): Promise<CdcServerProblem[]> {
  if (dialectOf(db).name === 'mysql') {
    const problems = await mysqlSettingProblems(db, 'server');
    const migrated = await db.query(`SELECT 1 FROM ${tables.versionTable} LIMIT 0`).then(
      () => true,
      () => false,
    );
    if (migrated && (await awaitingConnector(db, tables.versionTable))) {
      problems.push(NO_CONFIRMED_OFFSETS());
    }
    return problems;
  }
  const { rows } = await db.query<ProblemRow>(postgresReadinessQuery(tables.table, options));
  return rows.map(toProblem);
}

/**
 * MySQL/MariaDB: why the writer's guarded DELETE matched no row, read within the writer's
 * transaction. A connected binlog reader does not lift the marker (see the header): only a
 * confirmation of committed offsets does.
 */
export async function mysqlWriteRefusal(
  tx: Queryable,
  versionTable: string,
): Promise<CdcServerNotReadyError | undefined> {
  const problems = await mysqlSettingProblems(tx, 'session');
  if (problems.length > 0) return new CdcServerNotReadyError(problems);
  if (await awaitingConnector(tx, versionTable)) {
    return new CdcServerNotReadyError([NO_CONFIRMED_OFFSETS()]);
  }
  return undefined;
}

/** SQLSTATE the PostgreSQL trigger raises when a rule does not hold. */
const CDC_REFUSAL_SQLSTATE = 'EVCDC';

/** How the trigger words its refusal; parsed back by `postgresWriteRefusal`. */
const REFUSAL_MESSAGE = /^evgen CDC outbox: (.+?) is (.+); needs (.+)$/;

/**
 * The PL/pgSQL of the trigger's check: raises CDC_REFUSAL_SQLSTATE with the first rule that does
 * not hold (`evgen CDC outbox: <setting> is <value>; needs <required>`, the remedy as HINT).
 * `unreadable` is the quoted name of the function returning the rules that do not hold.
 */
export function postgresRefusalBlock(unreadable: string): string {
  const hints = Object.entries(REMEDIES)
    .map(
      ([kind, remedy]) =>
        `WHEN problem.setting LIKE '${kind}%' THEN '${remedy.replace(/'/g, "''")}'`,
    )
    .join('\n      ');
  return `SELECT * INTO problem FROM ${unreadable}() LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = '${CDC_REFUSAL_SQLSTATE}',
      MESSAGE = format('evgen CDC outbox: %s is %s; needs %s', problem.setting, problem.value, problem.required),
      HINT = CASE
      ${hints}
      END;
  END IF;`;
}

/** The typed error for a PostgreSQL refusal raised by the trigger, or null for any other error. */
export function postgresWriteRefusal(error: unknown): CdcServerNotReadyError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== CDC_REFUSAL_SQLSTATE || typeof message !== 'string') return null;
  const match = REFUSAL_MESSAGE.exec(message);
  if (match === null) return null;
  const [, setting, value, required] = match;
  return new CdcServerNotReadyError(
    [cdcServerProblem(setting!, value!, required!, !setting!.startsWith('wal_level'))],
    { cause: error },
  );
}
