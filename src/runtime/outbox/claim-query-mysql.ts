/**
 * The relay's SQL on MySQL 8 / MariaDB. The rules are those of claim-query-postgres: a row is
 * a head only if it is the lowest id of its aggregate that is not SENT (a DEAD row blocks the rest
 * until revived); a batch takes due heads with `FOR UPDATE SKIP LOCKED`, so concurrent relays never
 * take the same row, plus the due rows right behind each head; every row claimed gets this claim's
 * lease. Without UPDATE … RETURNING, LATERAL or array parameters, the claim is one short
 * transaction of a few statements, and the follower chains are cut in code.
 *
 * Timestamps are DATETIME(3) in UTC: the database clock is UTC_TIMESTAMP(3), an injected clock
 * goes in as a UTC literal; durations become microsecond intervals.
 */
import type { Database, Queryable } from '../db/database.js';
import { MYSQL_DIALECT } from '../db/sql-dialect.js';
import { mysqlTimestamp } from '../db/sql-timestamp.js';
import {
  chainDepth,
  type ClaimedBatch,
  type ClaimedRow,
  type ClaimRequest,
  type RelayStatements,
} from './claim-query.js';
import { aggregateKey } from './aggregate-chains.js';
import type { OutboxTableNames } from './outbox-table.js';

/** `now` (bound as one parameter): the injected clock, else the database's UTC clock. */
const NOW = 'COALESCE(?, UTC_TIMESTAMP(3))';
const nowParam = (now: Date | null) => (now === null ? null : mysqlTimestamp(now));
const micros = (ms: number) => Math.max(0, Math.round(ms * 1000));
const due = (alias: string) =>
  `((${alias}.status = 'READY' AND ${alias}.available_at <= ${NOW}) OR (${alias}.status = 'PROCESSING' AND ${alias}.locked_until <= ${NOW}))`;

/**
 * How many rows (per row of the batch) the heads scan may examine before it stops with the heads
 * it found (MariaDB's `LIMIT … ROWS EXAMINED`; MySQL ignores it and scans on, so there a claim
 * that finds nothing scans twice). A head is its aggregate's earliest unsent row, so with fewer
 * aggregates than the batch only a scan of every open row could prove that no head is left: each
 * claim cost time linear in the backlog and draining it took quadratic time (10 aggregates:
 * 6.5 ms at 2 000 open rows, 23 ms at 8 000). Bounded, a claim takes the heads among the oldest
 * open rows; aggregates whose first row lies further back wait until the backlog before them
 * shrinks, as in a queue.
 */
const HEAD_SCAN_ROWS_PER_BATCH_ROW = 20;

/** A carried SENT mark was not written: the claim that took it as written is rolled back. */
class CarriedMarkLost extends Error {}

interface ChainRow {
  readonly id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly due: number | string;
  readonly position: number | string;
}

/**
 * The rows a claim takes (ClaimedBatch's rules; PostgreSQL applies them in its claim statement).
 * `rows`: the heads' aggregates' unsent rows by position then id, up to `depth` + 1 each; `heads`
 * in id order, fewer than the batch. A run ends at its first row that is not due.
 */
function pickChains(
  rows: readonly ChainRow[],
  heads: readonly { aggregate_type: string; aggregate_id: string }[],
  batchSize: number,
  depth: number,
  maySplit: boolean,
): { picked: string[]; moreDue: boolean } {
  const rank = new Map(heads.map((head, index) => [aggregateKey(head), index]));
  const half = Math.ceil(heads.length / 2);
  const broken = new Set<string>();
  const due: { id: string; rank: number; position: number }[] = [];
  for (const row of rows) {
    const key = aggregateKey(row);
    if (broken.has(key)) continue;
    if (Number(row.due) !== 1) broken.add(key);
    else due.push({ id: row.id, rank: rank.get(key)!, position: Number(row.position) });
  }
  const inDepth = due.filter((row) => row.position <= depth);
  const split = maySplit && inDepth.length > batchSize;
  const picked = inDepth
    .filter((row) => !split || row.rank < half)
    .slice(0, batchSize)
    .map((row) => row.id);
  return { picked, moreDue: due.length > picked.length };
}

export function mysqlRelayStatements(names: OutboxTableNames): RelayStatements {
  const t = names.table;
  // Whether the last claim took nothing: then the next one scans the whole backlog at once.
  let tookNothing = true;
  const iso = MYSQL_DIALECT.isoTimestamp;
  const run = async (db: Queryable, text: string, params: unknown[]) => {
    await db.query(text, params);
  };
  // By primary key: on (status, id) the optimizer buffers the rows of the index it changes.
  const markSent = (db: Queryable, ids: readonly string[], token: string, now: Date | null) =>
    ids.length === 0
      ? Promise.resolve()
      : run(
          db,
          `UPDATE ${t} FORCE INDEX (PRIMARY) SET status = 'SENT', sent_at = ${NOW}, locked_until = NULL, lease_token = NULL
           WHERE id IN (?) AND lease_token = ? AND status = 'PROCESSING'`,
          [nowParam(now), [...ids], token],
        );

  /** The columns a claimed row is returned with (`attempts` as stored, before this claim's). */
  const rowColumns = (
    r: string,
  ) => `CAST(${r}.id AS CHAR) AS id, ${r}.event_id, ${r}.aggregate_type, ${r}.aggregate_id,
  CAST(${r}.aggregate_version AS CHAR) AS aggregate_version, ${r}.event_type, ${r}.schema_version, ${r}.payload,
  ${iso(`${r}.occurred_at`)} AS occurred_at, ${r}.trace_id, ${r}.correlation_id, ${r}.causation_id, ${r}.headers, ${r}.attempts`;

  /** `o` is at or before its aggregate's first row of `status` (carried marks not counted). */
  const firstOfStatus = (
    status: string,
    carried: boolean,
  ) => `o.id <= COALESCE((SELECT e.id FROM ${t} e FORCE INDEX (${names.aggregateIndex})
    WHERE e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id AND e.status = '${status}'${
      carried ? ' AND e.id NOT IN (?)' : ''
    }
    ORDER BY e.id LIMIT 1), ~0)`;

  /**
   * Due heads, lowest id first, locked, with every column (so a claim of heads alone needs no
   * read back); rows another relay holds are skipped. The scan starts at the lowest open id: each
   * MIN is one dive into the (status, id) index, so the optimizer evaluates the bound before
   * planning and walks the primary key from there. `MIN(id) … status IN (…)` or a derived table
   * was a scan from the table's first row, SENT history included (measured: 16 ms + 5 ms of
   * planning for 2 300 SENT rows before 1 700 open ones, 1.3 ms + 0.9 ms this way). The head
   * check takes the aggregate's first row of each unsent status (a lookup on (aggregate, status)
   * ordered by id): `MIN(id) … status IN (…)` read every row of the aggregate, its SENT history
   * too, each checked against the clustered row while the stream changes it (~100 pages per head).
   *
   * `carried`: the ids of the previous batch's SENT marks that the claim's one UPDATE writes (see
   * claim): they count as SENT here already, so the rows behind them can be heads.
   *
   * The DEAD check dives only for a row behind the table's lowest DEAD id (one dive, evaluated
   * once): usually there is none, and a third of the per-row dives go. The dives are held to the
   * aggregate index: for DEAD the optimizer took (status, id) and read every DEAD row of the
   * table per candidate. On MariaDB the subquery cache is off for the statement (an executable
   * comment MySQL ignores): each candidate is a new aggregate key, so the cache never hits and
   * only costs (measured, 100 heads over 2 000 rows: 1.43–1.57 → 1.10–1.13 ms of server CPU).
   */
  const headsSql = (
    carried: boolean,
    examined: number | undefined,
  ) => `/*M!100301 SET STATEMENT optimizer_switch='subquery_cache=off' FOR */ SELECT ${rowColumns('o')}
FROM ${t} o FORCE INDEX (PRIMARY)
WHERE o.id >= LEAST(
    COALESCE((SELECT MIN(r.id) FROM ${t} r WHERE r.status = 'READY'), ~0),
    COALESCE((SELECT MIN(p.id) FROM ${t} p WHERE p.status = 'PROCESSING'), ~0))
  AND o.status IN ('READY', 'PROCESSING') AND ${due('o')}${carried ? ' AND o.id NOT IN (?)' : ''}
  AND ${firstOfStatus('READY', false)}
  AND ${firstOfStatus('PROCESSING', carried)}
  AND (o.id < COALESCE((SELECT MIN(d.id) FROM ${t} d WHERE d.status = 'DEAD'), ~0)
    OR ${firstOfStatus('DEAD', false)})
ORDER BY o.id
LIMIT ?${examined === undefined ? '' : ` /*M!100000 ROWS EXAMINED ${examined} */`}
FOR UPDATE SKIP LOCKED`;

  /**
   * The first unsent rows of each head's aggregate from the head on (carried marks as SENT), up
   * to `limit` each, numbered per aggregate. Its READY rows come from one bounded range of the
   * aggregate index per head, so a chain costs its length, not its aggregate's backlog: one
   * query over all the heads' unsent rows read and numbered every one of them (10 aggregates:
   * 4.9 ms at 2 000 open rows, 18 ms at 8 000). Their PROCESSING and DEAD rows come from one
   * range per aggregate in a branch of their own: an aggregate has few (a DEAD row holds the rest
   * back, and leased rows are at most a batch), and none before its head but carried marks.
   */
  const chainSql = (heads: number, carried: boolean) => {
    const notCarried = carried ? ' AND n.id NOT IN (?)' : '';
    const columns =
      'n.id, n.aggregate_type, n.aggregate_id, n.status, n.available_at, n.locked_until';
    const ready = `(SELECT ${columns}
    FROM ${t} n FORCE INDEX (${names.aggregateIndex})
    WHERE n.aggregate_type = ? AND n.aggregate_id = ? AND n.status = 'READY' AND n.id >= CAST(? AS SIGNED)
    ORDER BY n.id LIMIT ?)`;
    const others = `(SELECT ${columns}
    FROM ${t} n FORCE INDEX (${names.aggregateIndex})
    WHERE (n.aggregate_type, n.aggregate_id) IN (${Array.from({ length: heads }, () => '(?, ?)').join(', ')})
      AND n.status IN ('PROCESSING', 'DEAD')${notCarried})`;
    const ranges = [...Array.from({ length: heads }, () => ready), others].join('\n  UNION ALL ');
    return `SELECT id, aggregate_type, aggregate_id, due, position FROM (
  SELECT CAST(n.id AS CHAR) AS id, n.id AS sort_id, n.aggregate_type, n.aggregate_id, ${due('n')} AS due,
    ROW_NUMBER() OVER (PARTITION BY n.aggregate_type, n.aggregate_id ORDER BY n.id) AS position
  FROM (${ranges}) n
) c WHERE c.position <= ? ORDER BY position, sort_id`;
  };

  const claimedSql = `SELECT ${rowColumns('r')}
FROM ${t} r WHERE r.id IN (?) AND r.lease_token = ? ORDER BY r.id`;

  /**
   * The lease of `picked` and the carried SENT marks in one UPDATE (one round trip less per
   * claim). Columns are assigned left to right and later terms see the new values, so status goes
   * last and the other terms tell the rows apart by id.
   */
  const leaseAndMarkSql = `UPDATE ${t} r FORCE INDEX (PRIMARY) SET
  last_error = CASE WHEN r.id IN (?) THEN r.last_error
    WHEN r.status = 'PROCESSING' THEN 'lease expired before the publish was confirmed' ELSE r.last_error END,
  sent_at = CASE WHEN r.id IN (?) THEN ${NOW} ELSE r.sent_at END,
  attempts = CASE WHEN r.id IN (?) THEN r.attempts ELSE r.attempts + 1 END,
  locked_until = CASE WHEN r.id IN (?) THEN NULL ELSE ${NOW} + INTERVAL ? MICROSECOND END,
  lease_token = CASE WHEN r.id IN (?) THEN NULL ELSE ? END,
  status = CASE WHEN r.id IN (?) THEN 'SENT' ELSE 'PROCESSING' END
WHERE (r.id IN (?) AND r.lease_token = ? AND r.status = 'PROCESSING') OR (r.id IN (?) AND ${due('r')})`;

  /**
   * Heads, the due rows behind them, the lease. With `carried` (the previous batch's SENT marks,
   * taken as written), the marks go into the lease UPDATE; the claim is valid only if every one
   * of them was written, else it throws `CarriedMarkLost` (the transaction rolls back).
   */
  async function claimIn(
    tx: Queryable,
    request: ClaimRequest,
    carried: { readonly ids: string[]; readonly token: string } | undefined,
  ): Promise<ClaimedBatch> {
    const { batchSize, token, leaseMs } = request;
    const now = nowParam(request.now);
    const marks = carried === undefined ? [] : [carried.ids];
    const headsWithin = async (examined: number | undefined) =>
      (
        await tx.query<ClaimedRow>(headsSql(carried !== undefined, examined), [
          now,
          now,
          ...marks,
          ...marks,
          batchSize,
        ])
      ).rows;
    // The oldest open rows first, as far as a bounded scan reaches; the whole backlog when that
    // found nothing to claim (its front not due, or held by another claim), and at once while
    // claims find nothing (idle polls, and the first claim), so an idle poll stays one query.
    let heads = tookNothing ? [] : await headsWithin(HEAD_SCAN_ROWS_PER_BATCH_ROW * batchSize);
    if (heads.length === 0) heads = await headsWithin(undefined);
    const headIds = heads.map((head) => head.id);
    let picked = headIds;
    let moreDue = false;
    if (heads.length > 0 && heads.length < batchSize) {
      const depth = chainDepth(heads.length, batchSize);
      const rows = (
        await tx.query<ChainRow>(chainSql(heads.length, carried !== undefined), [
          now,
          now,
          ...heads.flatMap((head) => [head.aggregate_type, head.aggregate_id, head.id, depth + 1]),
          ...heads.flatMap((head) => [head.aggregate_type, head.aggregate_id]),
          ...marks,
          depth + 1,
        ])
      ).rows;
      ({ picked, moreDue } = pickChains(rows, heads, batchSize, depth, request.split === true));
    }
    if (picked.length === 0) {
      // Nothing behind the marks was taken, so a mark that no longer applies holds nothing up.
      if (carried !== undefined) await markSent(tx, carried.ids, carried.token, request.now);
      return { rows: [], moreDue };
    }
    let leasedCount: number;
    if (carried === undefined) {
      // last_error first: MySQL assigns left to right and later terms see the new status.
      const leased = await tx.query(
        `UPDATE ${t} r SET
           last_error = CASE WHEN r.status = 'PROCESSING' THEN 'lease expired before the publish was confirmed' ELSE r.last_error END,
           status = 'PROCESSING', attempts = r.attempts + 1,
           locked_until = ${NOW} + INTERVAL ? MICROSECOND, lease_token = ?
         WHERE r.id IN (?) AND ${due('r')}`,
        [now, micros(leaseMs), token, picked, now, now],
      );
      leasedCount = leased.rowCount;
    } else {
      const ids = carried.ids;
      const updated = await tx.query(leaseAndMarkSql, [
        ids,
        ids,
        now,
        ids,
        ids,
        now,
        micros(leaseMs),
        ids,
        token,
        ids,
        ids,
        carried.token,
        picked,
        now,
        now,
      ]);
      // Fewer rows than asked: a mark whose lease was lost (the heads behind it would be taken
      // too early), or a row behind a head taken meanwhile; the two cannot be told apart here.
      if (updated.rowCount !== ids.length + picked.length) throw new CarriedMarkLost();
      leasedCount = picked.length;
    }
    // Heads alone, all leased: they were read locked, so they are as read, one attempt more.
    // Rows behind a head were read without a lock and are read back under this claim's token.
    if (picked === headIds && leasedCount === heads.length)
      return {
        rows: heads.map((head) => ({ ...head, attempts: Number(head.attempts) + 1 })),
        moreDue,
      };
    return { rows: (await tx.query<ClaimedRow>(claimedSql, [picked, token])).rows, moreDue };
  }

  /**
   * One transaction: heads (locked), [the rows behind them], one UPDATE leasing them and writing
   * the carried marks, COMMIT. If a carried mark could not be written, that try rolls back and the
   * claim runs again with the marks written first, on their own.
   */
  async function claim(db: Database, request: ClaimRequest): Promise<ClaimedBatch> {
    const claimed = await claimOnce(db, request);
    tookNothing = claimed.rows.length === 0;
    return claimed;
  }

  async function claimOnce(db: Database, request: ClaimRequest): Promise<ClaimedBatch> {
    const carried =
      request.sentToken !== null && request.sentIds.length > 0
        ? { ids: [...request.sentIds], token: request.sentToken }
        : undefined;
    if (carried !== undefined) {
      try {
        return await db.transaction((tx) => claimIn(tx, request, carried));
      } catch (error) {
        if (!(error instanceof CarriedMarkLost)) throw error;
      }
    }
    return db.transaction(async (tx) => {
      if (carried !== undefined) await markSent(tx, carried.ids, carried.token, request.now);
      return claimIn(tx, request, undefined);
    });
  }

  return {
    claim,
    sent: markSent,
    failed: (db, id, token, status, now, delayMs, error) =>
      run(
        db,
        `UPDATE ${t} SET status = ?, available_at = ${NOW} + INTERVAL ? MICROSECOND,
           last_error = ?, locked_until = NULL, lease_token = NULL
         WHERE id = ? AND lease_token = ? AND status = 'PROCESSING'`,
        [status, nowParam(now), micros(delayMs), error, id, token],
      ),
    deferred: (db, id, token, now, error) =>
      run(
        db,
        `UPDATE ${t} SET status = 'READY', attempts = GREATEST(attempts - 1, 0),
           available_at = ${NOW}, last_error = ?, locked_until = NULL, lease_token = NULL
         WHERE id = ? AND lease_token = ? AND status = 'PROCESSING'`,
        [nowParam(now), error, id, token],
      ),
    release: (db, ids, token) =>
      ids.length === 0
        ? Promise.resolve()
        : run(
            db,
            `UPDATE ${t} SET status = 'READY', attempts = GREATEST(attempts - 1, 0), locked_until = NULL, lease_token = NULL
             WHERE id IN (?) AND lease_token = ? AND status = 'PROCESSING'`,
            [[...ids], token],
          ),
    abandon: (db, ids, token, now) =>
      ids.length === 0
        ? Promise.resolve()
        : run(
            db,
            `UPDATE ${t} SET status = 'READY', available_at = ${NOW}, locked_until = NULL, lease_token = NULL,
               last_error = 'relay stopped before the publish settled'
             WHERE id IN (?) AND lease_token = ? AND status = 'PROCESSING'`,
            [nowParam(now), [...ids], token],
          ),
    renew: (db, token, leaseMs, now) =>
      run(
        db,
        `UPDATE ${t} SET locked_until = ${NOW} + INTERVAL ? MICROSECOND
         WHERE lease_token = ? AND status = 'PROCESSING'`,
        [nowParam(now), micros(leaseMs), token],
      ),
  };
}
