/**
 * The MariaDB claim on a long backlog held by few aggregates (claim-query-mysql), against the
 * real server:
 * - its heads scan examines a bounded number of rows from the oldest open one, so an aggregate
 *   whose first row lies further back than that waits, as in a queue, until the rows before it
 *   shrink;
 * - when the bounded scan finds nothing to claim (the oldest rows not due, or held by another
 *   claim), the claim scans the whole backlog, so no due head ever waits behind them; so does a
 *   relay's first claim, and one after a claim that took nothing (mysql-claim-round-trips);
 * - a chain is read per head from its own range (READY rows) and one range per aggregate of its
 *   PROCESSING and DEAD rows: a follower whose lease expired comes in order, a DEAD one ends it.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { insertBacklog } from './support/backlog.js';
import {
  openOutbox,
  outboxClaims,
  pgliteOnce,
  writeOrders,
  type OutboxFixture,
} from './support/dialects.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

/** The claim's bound is 20 examined rows per batch row: batches of 5 examine at most 100. */
const BATCH = 5;
/** More rows of one aggregate than a bounded scan of a batch of 5 examines. */
const FRONT_ROWS = 300;

describe('the MariaDB claim on a long backlog', () => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  /** FRONT_ROWS READY rows of aggregate o0 (after 1 000 SENT rows), then one row of `late`. */
  async function frontAndLate() {
    const f = (fixture = await openOutbox('mariadb', pglite));
    await insertBacklog(f.db, f.schema, { aggregates: 1, rows: FRONT_ROWS });
    const outbox = f.table('outbox_event');
    await writeOrders(f, ['late']);
    const { statements, claim } = outboxClaims(f);
    return { f, outbox, statements, claim };
  }

  it('takes the heads among the oldest open rows once claims take rows; a head further back waits for them to shrink', async () => {
    const { f, outbox, claim, statements } = await frontAndLate();
    // A relay's first claim scans the whole backlog (as one after a claim that took nothing).
    const first = await claim(BATCH);
    expect(new Set(first.rows.map((row) => row.aggregate_id))).toEqual(new Set(['o0', 'late']));
    await statements.release(
      f.db,
      first.rows.map((row) => row.id),
      first.token,
    );

    // After a claim that took rows: the scan is bounded, the late aggregate is out of reach.
    const bounded = await claim(BATCH);
    expect(bounded.rows.map((row) => row.aggregate_id)).toEqual(Array(BATCH).fill('o0'));
    // The chain of o0 goes in order, from its first row.
    const ids = bounded.rows.map((row) => BigInt(row.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));

    // All but the last rows of o0 sent: the late aggregate's head is now within reach.
    await f.db.query(
      `UPDATE ${outbox} SET status = 'SENT', sent_at = UTC_TIMESTAMP(3), lease_token = NULL,
         locked_until = NULL
       WHERE aggregate_id = 'o0' AND id < (SELECT m FROM (SELECT MAX(id) - 2 AS m FROM ${outbox} WHERE aggregate_id = 'o0') x)`,
    );
    const reached = await claim(BATCH);
    expect(reached.rows.map((row) => row.aggregate_id).sort()).toEqual(['late', 'o0', 'o0', 'o0']);
  });

  it('scans the whole backlog when the oldest rows are not due', async () => {
    const { f, outbox, claim, statements } = await frontAndLate();
    // o0's head backs off for an hour: none of its rows is a head that may go now.
    await f.db.query(
      `UPDATE ${outbox} SET available_at = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR
       WHERE id = (SELECT m FROM (SELECT MIN(id) AS m FROM ${outbox} WHERE aggregate_id = 'o0' AND status = 'READY') x)`,
    );
    // Claims take rows (so the next one is bounded), and the late row goes back each time.
    for (let i = 0; i < 2; i++) {
      const claimed = await claim(BATCH);
      expect(claimed.rows.map((row) => row.aggregate_id)).toEqual(['late']);
      await statements.release(
        f.db,
        claimed.rows.map((row) => row.id),
        claimed.token,
      );
    }
  });

  it('scans the whole backlog when another claim holds the oldest rows', async () => {
    const { claim } = await frontAndLate();
    // The first claim (the whole backlog) splits: the older half of the heads, deeper.
    const held = await claim(BATCH, { split: true });
    expect(held.rows.map((row) => row.aggregate_id)).toEqual(Array(BATCH).fill('o0'));
    const next = await claim(BATCH);
    expect(next.rows.map((row) => row.aggregate_id)).toEqual(['late']);
  });

  it('chains an expired lease behind the head in order and stops at a DEAD row', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    await insertBacklog(f.db, f.schema, { aggregates: 1, rows: 6 });
    const outbox = f.table('outbox_event');
    const { rows } = await f.db.query<{ id: string }>(
      `SELECT CAST(id AS CHAR) AS id FROM ${outbox} WHERE aggregate_id = 'o0' ORDER BY id`,
    );
    const [a1, a2, a3, a4, a5] = rows.map((row) => row.id);
    // A relay died holding a1 and a2; a4 went DEAD.
    await f.db.query(
      `UPDATE ${outbox} SET status = 'PROCESSING', lease_token = UUID(),
         locked_until = UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE WHERE id IN (?, ?)`,
      [a1, a2],
    );
    await f.db.query(`UPDATE ${outbox} SET status = 'DEAD' WHERE id = ?`, [a4]);
    const claimed = await outboxClaims(f).claim(10);
    expect(claimed.rows.map((row) => row.id)).toEqual([a1, a2, a3]);
    expect(claimed.rows.map((row) => row.id)).not.toContain(a5);
  });
});
