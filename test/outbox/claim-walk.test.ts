/**
 * How the PostgreSQL claim chooses between its two ways of finding heads (claim-query-postgres):
 * per aggregate (the walk) while at most a batch of aggregates is free, stepping over aggregates
 * another claim holds; else a scan in id order; and a claim whose scan filled its batch lets the
 * next claim scan without walking first.
 * - The choice claim by claim, on a fake database that records the walk limit each claim
 *   passes and answers as a claim would (pure logic).
 * - On both PostgreSQL dialects, backlogs where a scan reads every open row: 50 aggregates, and
 *   150 aggregates of which another claim holds 100. The claim's plan walks and never runs the
 *   scan, and the claim takes the same rows as a scan would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Database } from 'evgen/runtime';
import type { ClaimedBatch, RelayStatements } from '../../src/runtime/outbox/claim-query.js';
import { postgresRelayStatements } from '../../src/runtime/outbox/claim-query-postgres.js';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { POSTGRES_DIALECT } from '../../src/runtime/db/sql-dialect.js';
import { insertBacklog } from './support/backlog.js';
import {
  DIALECTS,
  openOutbox,
  pgliteOnce,
  rolledBack,
  type OutboxFixture,
} from './support/dialects.js';

const BATCH = 100;

const claimRequest = (batchSize = BATCH) => ({
  batchSize,
  token: randomUUID(),
  leaseMs: 60_000,
  now: null,
  sentIds: [],
  sentToken: null,
});

describe('the way the next PostgreSQL claim finds its heads', () => {
  /** What the fake answers for one claim: how its heads were found, how many, rows returned. */
  interface Answer {
    readonly walked: boolean;
    readonly heads: number;
    readonly rows: number;
  }

  /** Statements on a fake database that answers `answers` in turn; `limits` gets each walk limit ($8). */
  function fakeClaims(fewAggregates?: number) {
    const limits: unknown[] = [];
    let answer: Answer = { walked: true, heads: 0, rows: 0 };
    const db = {
      kind: 'postgres',
      dialect: POSTGRES_DIALECT,
      query: (_text: string, params: readonly unknown[]) => {
        limits.push(params[7]);
        const rows = Array.from({ length: answer.rows }, (_, i) => ({
          id: String(i + 1),
          more_due: false,
          walked: answer.walked,
          heads: answer.heads,
        }));
        return Promise.resolve({ rows, rowCount: rows.length });
      },
    } as unknown as Database;
    const statements = postgresRelayStatements(outboxTableNames({}, POSTGRES_DIALECT), {
      prepared: false,
      ...(fewAggregates === undefined ? {} : { fewAggregates }),
    });
    const claim = async (next: Answer): Promise<ClaimedBatch> => {
      answer = next;
      return statements.claim(db, claimRequest());
    };
    return { claim, limits };
  }

  const scanFilled: Answer = { walked: false, heads: BATCH, rows: BATCH };
  const scanShort: Answer = { walked: false, heads: 40, rows: 40 };
  const walked: Answer = { walked: true, heads: 10, rows: BATCH };
  const empty: Answer = { walked: false, heads: 0, rows: 0 };

  it('walks up to a batch of free aggregates, and scans only after a scan that filled its batch', async () => {
    const { claim, limits } = fakeClaims();
    for (const answer of [scanFilled, scanFilled, scanShort, walked, scanFilled, empty, walked])
      await claim(answer);
    // First claim: walk (up to a batch). After a filled scan: scan (0). After a short scan, a
    // walk, or an empty claim: walk again.
    expect(limits).toEqual([BATCH, 0, 0, BATCH, BATCH, 0, BATCH]);
  });

  it('strips what the statement says of the claim from the rows it returns', async () => {
    const { claim } = fakeClaims();
    const batch = await claim(walked);
    expect(batch.rows).toHaveLength(BATCH);
    expect(Object.keys(batch.rows[0]!).sort()).toEqual(['id']);
  });

  it('uses fewAggregates as the walk limit, and 0 always scans', async () => {
    const few = fakeClaims(32);
    for (const answer of [walked, scanFilled, scanShort]) await few.claim(answer);
    expect(few.limits).toEqual([32, 32, 0]);
    const scanOnly = fakeClaims(0);
    for (const answer of [scanShort, walked, empty]) await scanOnly.claim(answer);
    expect(scanOnly.limits).toEqual([0, 0, 0]);
  });
});

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(DIALECTS.filter((dialect) => dialect !== 'mariadb'))(
  'the PostgreSQL claim on a long backlog of few aggregates, %s',
  (dialect) => {
    let fixture: OutboxFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
      fixture = undefined;
    });

    /** An outbox with `rows` READY rows of `aggregates` aggregates behind SENT history. */
    async function backlog(aggregates: number, rows: number): Promise<OutboxFixture> {
      const f = (fixture = await openOutbox(dialect, pglite));
      await insertBacklog(f.db, f.schema, { aggregates, rows });
      return f;
    }

    /**
     * One claim by `statements` inside a transaction that is rolled back: the claimed ids and the
     * plan of the claim statement (run with EXPLAIN ANALYZE on the same transaction).
     */
    function claimRolledBack(f: OutboxFixture, statements: RelayStatements) {
      return rolledBack(f.db, async (tx) => {
        let plan = '';
        const explaining = {
          dialect: f.db.dialect,
          query: async (text: string, params?: readonly unknown[]) => {
            const result = await tx.query(
              `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${text}`,
              params,
            );
            plan = result.rows.map((row) => String(Object.values(row)[0])).join('\n');
            return { rows: [], rowCount: 0 };
          },
        } as unknown as Database;
        // EXPLAIN ANALYZE runs the claim: undone before the same claim runs for its rows.
        await tx.query('SAVEPOINT before_claim');
        await statements.claim(explaining, claimRequest());
        await tx.query('ROLLBACK TO SAVEPOINT before_claim');
        const { rows } = await statements.claim(tx as unknown as Database, claimRequest());
        return { ids: rows.map((row) => String(row.id)).sort(), plan };
      });
    }

    const statementsOf = (f: OutboxFixture, fewAggregates?: number) =>
      postgresRelayStatements(outboxTableNames({ schema: f.schema }, f.db.dialect), {
        prepared: false,
        ...(fewAggregates === undefined ? {} : { fewAggregates }),
      });

    /** The plan line of the scan in id order (the claim index read as `o`). */
    const scanLine = (plan: string) =>
      plan.split('\n').find((line) => /outbox_event_claimable_idx on outbox_event o\b/.test(line));

    async function expectWalkNotScan(f: OutboxFixture) {
      const walking = await claimRolledBack(f, statementsOf(f));
      const scanning = await claimRolledBack(f, statementsOf(f, 0));
      // The walk found the heads: the scan in id order never ran.
      expect(scanLine(walking.plan), walking.plan).toMatch(/never executed/);
      // A scan in id order did run for the scan-only statements (it is the plan's other way).
      expect(scanLine(scanning.plan), scanning.plan).not.toMatch(/never executed/);
      // And both ways claim the same rows, a full batch.
      expect(walking.ids).toHaveLength(BATCH);
      expect(walking.ids).toEqual(scanning.ids);
    }

    it('50 aggregates, 2 000 open rows: the heads are found per aggregate', async () => {
      const f = await backlog(50, 2_000);
      await expectWalkNotScan(f);
    });

    it('150 aggregates, 100 of them held by another claim: the rest are found per aggregate', async () => {
      const f = await backlog(150, 3_000);
      // Another claim (its own statements, as another relay or lane) holds a batch of heads.
      const held = await statementsOf(f, 0).claim(f.db, claimRequest());
      expect(new Set(held.rows.map((row) => row.aggregate_id)).size).toBe(BATCH);
      await expectWalkNotScan(f);
    });
  },
);
