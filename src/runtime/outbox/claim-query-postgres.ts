/**
 * The relay's SQL on PostgreSQL. Claiming is ONE statement (its own transaction): it locks due rows with
 * `FOR UPDATE SKIP LOCKED`, so concurrent relays never take the same row, and leases them
 * (`locked_until`, `lease_token`), so a relay that dies mid-publish only delays its rows.
 *
 * Per-aggregate order: a row is a "head" only if no earlier (lower id) row of the same aggregate
 * is unsent (READY, incl. backing off, PROCESSING) or DEAD: it is the aggregate's lowest id that
 * is not SENT. A DEAD row therefore holds its aggregate back until it is revived (or removed);
 * the rows behind it wait, and `listDeadOutboxEvents` shows how many. A batch takes heads and, behind each head,
 * the following rows of that aggregate up to the first one that is not due, so the relay can
 * publish a run of one aggregate in order. Another relay cannot claim those followers: their
 * head stays unsent until this relay finishes with it.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../db/database.js';
import { isoTimestampSql } from '../db/sql-timestamp.js';
import type { ClaimedRow, RelayStatements } from './claim-query.js';
import type { OutboxTableNames } from './outbox-table.js';

/** `now` is the relay's clock when one is injected (tests), else the database's. */
const nowParam = (index: number) => `COALESCE($${index}::timestamptz, now())`;
const NOW = nowParam(4);
const due = (alias: string) =>
  `((${alias}.status = 'READY' AND ${alias}.available_at <= ${NOW}) OR (${alias}.status = 'PROCESSING' AND ${alias}.locked_until <= ${NOW}))`;
/** 1 when the row is not held by a live lease (another claim's), else 0: the walk counts these. */
const free = (alias: string) =>
  `CASE WHEN ${alias}.status = 'PROCESSING' AND ${alias}.locked_until > ${NOW} THEN 0 ELSE 1 END`;

/**
 * An ids parameter (a `{…}` array literal as text) as a bigint[] parsed once per statement. As
 * `$n::text::bigint[]` inline, the text-to-array cast is not folded into a constant (array input
 * is not immutable), so `id = ANY(…)` parsed the whole literal again for every row it tested.
 */
const idsParam = (index: number) => `(SELECT $${index}::text::bigint[])::bigint[]`;

/**
 * Parameters: $1 batch size, $2 lease token, $3 lease in ms, $4 now or NULL, $5 ids of an
 * earlier batch's confirmed rows to mark SENT first (a `{…}` bigint array literal, may be
 * empty), $6 that batch's lease token or NULL, $7 whether it may split, $8 up to how many aggregates
 * the heads may be found per aggregate (0: scan only). Rows this marks SENT
 * count as SENT for the head check (the statement's snapshot still shows them PROCESSING); rows
 * it does not mark (their lease was lost) still hold their aggregate back.
 *
 * Heads are found one of two ways. With at most $8 aggregates holding unsent rows, a skip scan
 * over the aggregate index (the walk) takes each one's earliest unsent row: one probe per
 * aggregate. Otherwise the claim index is scanned in id order and each due row is checked for
 * being its aggregate's earliest: cheap while most open rows are heads, but a scan that finds
 * fewer heads than the batch reads every open row, so with fewer aggregates than that and long
 * backlogs, draining took time quadratic in the backlog (10 aggregates: 20 ms per claim at 2 000
 * open rows, 45 ms at 8 000; 50: 11 and 65 ms). The walk stops after $8 + 1 aggregates, so at
 * most that many probes when it gives way; the caller passes 0 while scans fill their batches
 * (postgresRelayStatements), and then no walk is tried at all.
 *
 * Behind each head the claim takes a chain of that aggregate's due rows (see claim-query.ts for
 * the split and the depth; MariaDB's claim follows the same rules). It returns, with every row,
 * whether due rows it saw were left (`more_due`).
 */
function claimSql(names: OutboxTableNames): string {
  const t = names.table;
  return `WITH RECURSIVE sent AS (
  UPDATE ${t} SET status = 'SENT', sent_at = ${NOW}, locked_until = NULL, lease_token = NULL
  WHERE id = ANY(${idsParam(5)}) AND lease_token = $6::uuid AND status = 'PROCESSING'
  RETURNING id
), firsts (aggregate_type, aggregate_id, id, n, steps) AS (
  -- Each aggregate's earliest row that is not SENT, one index probe per aggregate in key order,
  -- stopping after $8 + 1 free aggregates (n) or twice that many steps. An aggregate whose
  -- earliest row another claim holds is stepped over, not counted: while one lane publishes a
  -- full batch, the other still finds the aggregates it left this way.
  (SELECT e.aggregate_type, e.aggregate_id, e.id, ${free('e')}, 1
   FROM ${t} e
   WHERE e.status <> 'SENT' AND e.id NOT IN (SELECT id FROM sent)
   ORDER BY e.aggregate_type, e.aggregate_id, e.id
   LIMIT 1)
  UNION ALL
  SELECT x.aggregate_type, x.aggregate_id, x.id, f.n + ${free('x')}, f.steps + 1
  FROM firsts f
  CROSS JOIN LATERAL (
    SELECT e.aggregate_type, e.aggregate_id, e.id, e.status, e.locked_until
    FROM ${t} e
    WHERE e.status <> 'SENT' AND e.id NOT IN (SELECT id FROM sent)
      AND (e.aggregate_type, e.aggregate_id) > (f.aggregate_type, f.aggregate_id)
    ORDER BY e.aggregate_type, e.aggregate_id, e.id
    LIMIT 1) x
  WHERE f.n <= $8::int AND f.steps < 2 * ($8::int + 1)
), few AS (
  -- Every aggregate seen, and at most $8 of them free (n counts them along the walk).
  SELECT coalesce(max(n), 0) <= $8::int AND count(*) < 2 * ($8::int + 1) AS yes
  FROM firsts
), few_heads AS (
  -- Few aggregates with unsent rows: the heads are their earliest rows, found above.
  SELECT w.id, w.aggregate_type, w.aggregate_id
  FROM ${t} w
  WHERE (SELECT yes FROM few) AND w.id IN (SELECT id FROM firsts)
    AND w.status NOT IN ('SENT', 'DEAD') AND ${due('w')}
  ORDER BY w.id
  LIMIT $1::int
  FOR UPDATE OF w SKIP LOCKED
), scanned_heads AS (
  SELECT o.id, o.aggregate_type, o.aggregate_id
  FROM ${t} o
  -- The claim index's predicate. The due and head checks are one CASE so that, without
  -- statistics, the planner estimates them at one half instead of multiplying default
  -- selectivities into a one-row guess; with that guess it bitmap-scans the whole backlog and
  -- sorts it instead of walking the index in id order up to a full batch.
  WHERE NOT (SELECT yes FROM few) AND o.status NOT IN ('SENT', 'DEAD')
    AND CASE WHEN ${due('o')}
      -- The earliest row of its aggregate that is not SENT (a DEAD one blocks the rest until
      -- revived). A scalar subquery (not NOT EXISTS) so the plan is an index probe per scanned
      -- due row even without statistics (PGlite never auto-analyzes).
      THEN o.id = (
        SELECT min(e.id) FROM ${t} e
        WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
          AND e.status <> 'SENT' AND e.id NOT IN (SELECT id FROM sent))
      ELSE false END
  ORDER BY o.id
  LIMIT $1::int
  FOR UPDATE OF o SKIP LOCKED
), heads AS (
  SELECT * FROM few_heads UNION ALL SELECT * FROM scanned_heads
), seen AS (
  -- Fewer heads than the batch: every aggregate free to claim was seen, so chains may go deeper
  -- (depth rows each, one more read to tell whether more is due) and the claim may split.
  SELECT count(*) AS heads, (count(*) + 1) / 2 AS half,
    CASE WHEN count(*) < $1::int THEN ceil($1::float8 / ((count(*) + 1) / 2))::int ELSE 1 END AS depth
  FROM heads
), chain AS (
  -- Per head, at most depth (+1) rows: an index range scan, not the aggregate's whole backlog.
  SELECT f.id, h.rank,
    bool_and(f.due) OVER run AS claimable,
    row_number() OVER run AS position
  FROM (SELECT heads.*, row_number() OVER (ORDER BY heads.id) AS rank FROM heads) h
  CROSS JOIN LATERAL (
    SELECT n.id, n.aggregate_type, n.aggregate_id, ${due('n')} AS due
    FROM ${t} n
    WHERE n.aggregate_type = h.aggregate_type AND n.aggregate_id = h.aggregate_id AND n.id >= h.id
      AND n.status <> 'SENT' AND n.id NOT IN (SELECT id FROM sent)
    ORDER BY n.id
    LIMIT (SELECT depth + CASE WHEN heads < $1::int THEN 1 ELSE 0 END FROM seen)
  ) f
  WINDOW run AS (PARTITION BY f.aggregate_type, f.aggregate_id ORDER BY f.id)
), split AS (
  -- More due rows than the batch: take the earlier half of the heads, deeper (claim-query.ts).
  SELECT $7::boolean AND (SELECT heads FROM seen) < $1::int
    AND (SELECT count(*) FROM chain WHERE claimable AND position <= (SELECT depth FROM seen)) > $1::int AS yes
), taken AS (
  SELECT id FROM chain
  WHERE claimable AND position <= (SELECT depth FROM seen)
    AND (NOT (SELECT yes FROM split) OR rank <= (SELECT half FROM seen))
  ORDER BY position, id
  LIMIT $1::int
)
UPDATE ${t} r
SET status = 'PROCESSING',
    attempts = r.attempts + 1,
    locked_until = ${NOW} + $3::float8 * interval '1 millisecond',
    lease_token = $2::uuid,
    last_error = CASE WHEN r.status = 'PROCESSING' THEN 'lease expired before the publish was confirmed' ELSE r.last_error END
-- The picked ids as an array: primary-key probes whatever the statistics say (joined to the
-- table, stale statistics made it re-run the picking once per due row).
WHERE r.id = ANY(ARRAY(SELECT id FROM taken))
  AND ${due('r')}
RETURNING r.id::text AS id, r.event_id::text AS event_id, r.aggregate_type, r.aggregate_id,
  r.aggregate_version::text AS aggregate_version, r.event_type, r.schema_version, r.payload,
  ${isoTimestampSql('r.occurred_at')} AS occurred_at,
  r.trace_id, r.correlation_id, r.causation_id, r.headers, r.attempts,
  -- Due rows seen and not taken: behind a chain cut at depth or the batch, or heads left to split.
  (SELECT count(*) FROM chain WHERE claimable) > (SELECT count(*) FROM taken) AS more_due,
  -- How the heads were found, for the choice of the next claim's way (postgresRelayStatements).
  (SELECT yes FROM few) AS walked, (SELECT heads FROM seen)::int AS heads`;
}

/** Parameters: $1 ids as a `{…}` bigint array literal, $2 lease token, $3 now or NULL. */
function markSentSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET status = 'SENT', sent_at = ${nowParam(3)}, locked_until = NULL, lease_token = NULL
WHERE id = ANY(${idsParam(1)}) AND lease_token = $2::uuid AND status = 'PROCESSING'`;
}

/** Parameters: $1 id, $2 lease token, $3 new status (READY or DEAD), $4 now or NULL, $5 delay ms, $6 error. */
function markFailedSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET status = $3::text, available_at = ${NOW} + $5::float8 * interval '1 millisecond',
  last_error = $6::text, locked_until = NULL, lease_token = NULL
WHERE id = $1::bigint AND lease_token = $2::uuid AND status = 'PROCESSING'`;
}

/**
 * Extends this relay's lease on the rows it still holds (the heartbeat while it publishes).
 * Parameters: $1 lease token, $2 lease in ms, $3 now or NULL.
 */
function renewLeaseSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET locked_until = ${nowParam(3)} + $2::float8 * interval '1 millisecond'
WHERE lease_token = $1::uuid AND status = 'PROCESSING'`;
}

/**
 * A publish failed because the broker is unavailable, not because of the message: READY and due
 * at once, the attempt given back (it must not use up the budget meant for poison messages); the
 * relay's outage backoff holds it back. Parameters: $1 id, $2 lease token, $3 now or NULL, $4 error.
 */
function markDeferredSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET status = 'READY', attempts = GREATEST(attempts - 1, 0),
  available_at = ${nowParam(3)}, last_error = $4::text, locked_until = NULL, lease_token = NULL
WHERE id = $1::bigint AND lease_token = $2::uuid AND status = 'PROCESSING'`;
}

/** Gives back rows this relay claimed but did not try: not an attempt, so attempts is restored. */
function releaseSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET status = 'READY', attempts = GREATEST(attempts - 1, 0), locked_until = NULL, lease_token = NULL
WHERE id = ANY(${idsParam(1)}) AND lease_token = $2::uuid AND status = 'PROCESSING'`;
}

/**
 * Gives back rows whose publish started but never settled before the relay stopped waiting
 * (stop with a timeout): due again at once, the attempt stays counted (the message may have
 * reached the broker) but is not a failure. Parameters: $1 ids array literal, $2 lease token, $3 now or NULL.
 */
function abandonSql(names: OutboxTableNames): string {
  return `UPDATE ${names.table} SET status = 'READY', available_at = ${nowParam(3)}, locked_until = NULL, lease_token = NULL,
  last_error = 'relay stopped before the publish settled'
WHERE id = ANY(${idsParam(1)}) AND lease_token = $2::uuid AND status = 'PROCESSING'`;
}

/** `{1,2,3}`: ids (decimal strings from the database) as one array parameter. */
function idArray(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

/**
 * A prepared statement's name, derived from its text: node-postgres prepares a named statement
 * once per connection, so two relays on different tables sharing a pool must never share a name.
 */
export function preparedStatementName(kind: string, text: string): string {
  return `evgen_${kind}_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/** A claimed row as the claim statement returns it, with what it says of the whole claim. */
type ClaimedHeadsRow = ClaimedRow & {
  readonly more_due: boolean;
  readonly walked: boolean;
  readonly heads: number;
};

/** How the relay's PostgreSQL statements run (`createOutboxRelay`'s `preparedStatements`). */
export interface PostgresRelayStatementOptions {
  /** Named prepared statements (default true); `false` sends every statement unnamed. */
  readonly prepared?: boolean;
  /** Called once, when a prepared statement failed as behind a transaction pooler and preparing stops. */
  readonly onPreparedStatementsOff?: (error: Error) => void;
  /**
   * Up to how many aggregates with unsent rows the claim finds heads per aggregate instead of by
   * scanning rows in id order (default the batch size; 0 always scans). For tests of both ways.
   */
  readonly fewAggregates?: number;
}

/**
 * 26000 (prepared statement does not exist) and 42P05 (already exists): what a named statement
 * gets behind a pooler that moves a client between server connections (PgBouncer in transaction
 * mode without prepared-statement support) or resets them (DISCARD ALL).
 */
const POOLER_SQLSTATES = new Set(['26000', '42P05']);

function isPoolerPreparedError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && POOLER_SQLSTATES.has(code);
}

/**
 * Each statement runs prepared where the adapter can (node-postgres: parsed and analysed once per
 * connection, and planned once while PostgreSQL keeps a generic plan): the claim spent ~16 % of
 * its backend CPU parsing and planning. A generic plan of the claim still walks the claim index
 * in id order (test/outbox/prepared-claim.test.ts checks it).
 *
 * Behind a transaction pooler the names break (test/outbox/pgbouncer.test.ts): the first 26000 or
 * 42P05 turns preparing off for good and the failed statement runs again unnamed. That is safe
 * for every statement, the claim's writing CTE included: both errors come from Parse or Bind,
 * before Execute, and the server skips the rest of the message batch up to Sync, so nothing ran;
 * and none of these statements runs inside a transaction the error could have aborted.
 */
export function postgresRelayStatements(
  names: OutboxTableNames,
  options: PostgresRelayStatementOptions = {},
): RelayStatements {
  const { fewAggregates } = options;
  if (fewAggregates !== undefined && !(Number.isInteger(fewAggregates) && fewAggregates >= 0))
    throw new RangeError(`fewAggregates must be a non-negative integer (got ${fewAggregates})`);
  // Whether the last claim that took rows found its heads by scanning and filled its batch. Then
  // the next claim scans without walking first: with that many aggregates the walk would only
  // give way, after as many probes as it may take. Any other claim (the walk found the heads, a
  // scan came back short or empty) lets the next one walk, since a short scan read every open row.
  let scansFill = false;
  const sql = {
    claim: claimSql(names),
    sent: markSentSql(names),
    failed: markFailedSql(names),
    deferred: markDeferredSql(names),
    release: releaseSql(names),
    abandon: abandonSql(names),
    renew: renewLeaseSql(names),
  };
  type Kind = keyof typeof sql;
  const name = Object.fromEntries(
    Object.entries(sql).map(([kind, text]) => [kind, preparedStatementName(kind, text)]),
  ) as Record<Kind, string>;
  let prepared = options.prepared !== false;
  const query = async <R>(db: Database, kind: Kind, params: unknown[]) => {
    if (!prepared) return db.query<R>(sql[kind], params);
    try {
      return await db.query<R>(sql[kind], params, { name: name[kind] });
    } catch (error) {
      if (!isPoolerPreparedError(error)) throw error;
      if (prepared) {
        prepared = false;
        const code = (error as { code: string }).code;
        options.onPreparedStatementsOff?.(
          new Error(
            `evgen relay: PostgreSQL refused its prepared statement "${name[kind]}" (SQLSTATE ${code}: ${(error as Error).message}), as it does behind a connection pooler in transaction mode (PgBouncer before 1.21, or with max_prepared_statements = 0) or one that runs DISCARD ALL; this relay now sends its statements unnamed (not prepared) and carries on. Pass preparedStatements: false to createOutboxRelay to start that way.`,
            { cause: error },
          ),
        );
      }
      return db.query<R>(sql[kind], params);
    }
  };
  const run = async (db: Database, kind: Kind, params: unknown[]) => {
    await query(db, kind, params);
  };
  return {
    async claim(db, r) {
      // Up to a batch of free aggregates: a scan would read every open row to find their heads.
      const walkLimit = scansFill ? 0 : (fewAggregates ?? r.batchSize);
      const claimed = await query<ClaimedHeadsRow>(db, 'claim', [
        r.batchSize,
        r.token,
        r.leaseMs,
        r.now,
        idArray(r.sentIds),
        r.sentToken,
        r.split === true,
        walkLimit,
      ]);
      const first = claimed.rows[0];
      scansFill = first !== undefined && !first.walked && first.heads >= r.batchSize;
      const rows = claimed.rows.map(
        ({ more_due: _more, walked: _walked, heads: _heads, ...row }) => row,
      );
      return { rows, moreDue: first?.more_due === true };
    },
    sent: (db, ids, token, now) => run(db, 'sent', [idArray(ids), token, now]),
    failed: (db, id, token, status, now, delayMs, error) =>
      run(db, 'failed', [id, token, status, now, delayMs, error]),
    deferred: (db, id, token, now, error) => run(db, 'deferred', [id, token, now, error]),
    release: (db, ids, token) => run(db, 'release', [idArray(ids), token]),
    abandon: (db, ids, token, now) => run(db, 'abandon', [idArray(ids), token, now]),
    renew: (db, token, leaseMs, now) => run(db, 'renew', [token, leaseMs, now]),
  };
}
