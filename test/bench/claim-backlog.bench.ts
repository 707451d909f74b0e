/**
 * What one claim of 100 costs as a backlog grows, on the real PostgreSQL and MariaDB: the relay's
 * own claim statements on a backlog of 8 000 open rows against the same claim on 2 000 open rows
 * (measured in the same run, alternating), for backlogs held by 10 and 50 aggregates, and by 150
 * aggregates of which another claim holds 100 (the other lane's batch). A claim whose cost grows
 * with the backlog makes draining it quadratic; the goal is a claim at 8 000 rows that costs at
 * most 1.5× the claim at 2 000. Each claimed batch is released again, so every sample claims
 * from the same backlog.
 */
import { randomUUID } from 'node:crypto';
import {
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  type Database,
} from '../../src/runtime/index.js';
import type { RelayStatements } from '../../src/runtime/outbox/claim-query.js';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import { insertBacklog } from '../outbox/support/backlog.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';
import { fromSamples, SAMPLES, SMOKE, type BenchResult } from './bench-result.js';

const BATCH = 100;
const SMALL = SMOKE ? 200 : 2_000;
const LARGE = SMOKE ? 800 : 8_000;
const CLAIMS_PER_SAMPLE = SMOKE ? 2 : 10;

interface Backlog {
  readonly label: string;
  readonly aggregates: number;
  /** Aggregates another claim holds while the claims are timed. */
  readonly held: number;
}

const BACKLOGS: readonly Backlog[] = [
  { label: '10 aggregates', aggregates: 10, held: 0 },
  { label: '50 aggregates', aggregates: 50, held: 0 },
  { label: '150 aggregates, 100 held by the other lane', aggregates: 150, held: 100 },
];

/** Opens an empty database of its own for one outbox (dropped by `drop`). */
type OpenDatabase = () => Promise<{ db: Database; schema: string; drop: () => Promise<void> }>;

const request = () => ({
  batchSize: BATCH,
  token: randomUUID(),
  leaseMs: 600_000,
  now: null,
  sentIds: [],
  sentToken: null,
});

/** Milliseconds per claim over `CLAIMS_PER_SAMPLE` claims, each released again. */
async function claimMs(db: Database, statements: RelayStatements): Promise<number> {
  let total = 0;
  for (let i = 0; i < CLAIMS_PER_SAMPLE; i++) {
    const claim = request();
    const start = process.hrtime.bigint();
    const { rows } = await statements.claim(db, claim);
    total += Number(process.hrtime.bigint() - start) / 1e6;
    if (rows.length === 0) throw new Error('the claim took nothing from the backlog');
    await statements.release(
      db,
      rows.map((row) => row.id),
      claim.token,
    );
  }
  return total / CLAIMS_PER_SAMPLE;
}

/** Two outboxes (small and large backlog) of one shape in `open`'s database; claims alternate. */
async function backlogBench(
  dialectLabel: string,
  open: OpenDatabase,
  backlog: Backlog,
): Promise<BenchResult> {
  const small = await open();
  const large = await open();
  try {
    const sides = [];
    for (const [side, rows] of [
      [small, SMALL],
      [large, LARGE],
    ] as const) {
      await migrateOutbox(side.db, { schema: side.schema });
      await insertBacklog(side.db, side.schema, { aggregates: backlog.aggregates, rows });
      const names = outboxTableNames({ schema: side.schema }, side.db.dialect);
      // The other lane: its own statements, holding a batch of heads for the whole run.
      if (backlog.held > 0) {
        const held = await relayStatements(names, side.db.dialect, { fewAggregates: 0 }).claim(
          side.db,
          request(),
        );
        if (held.rows.length !== backlog.held) throw new Error('the other lane took too little');
      }
      sides.push(relayStatements(names, side.db.dialect));
    }
    // Warm-up: plans, connections, the statements' choice of how to find heads.
    await claimMs(small.db, sides[0]!);
    await claimMs(large.db, sides[1]!);
    const smallMs: number[] = [];
    const largeMs: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      smallMs.push(await claimMs(small.db, sides[0]!));
      largeMs.push(await claimMs(large.db, sides[1]!));
    }
    return fromSamples(
      {
        name: `claim of ${BATCH}, ${dialectLabel}, ${backlog.label}: ${LARGE} open rows`,
        unit: 'ms',
        baselineName: `the same claim on ${SMALL} open rows`,
        goal: { ratio: 1.5, better: 'lower' },
        note: `mean of ${CLAIMS_PER_SAMPLE} claims per sample, each released again`,
      },
      largeMs,
      smallMs,
    );
  } finally {
    await small.drop();
    await large.drop();
  }
}

/** The databases the bench runs on: a fresh schema (PostgreSQL) or database (MariaDB) each. */
const DATABASES: readonly (readonly [string, OpenDatabase])[] = [
  [
    'PostgreSQL',
    async () => {
      const test = await createTestSchema('evgen_bench_backlog');
      return { db: postgresDatabase(test.pool), schema: test.schema, drop: () => test.drop() };
    },
  ],
  [
    'MariaDB',
    async () => {
      const test = await createMariadbDatabase('evgen_bench_backlog');
      return { db: mysqlDatabase(test.pool), schema: test.schema, drop: () => test.drop() };
    },
  ],
];

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const backlog of BACKLOGS)
    for (const [label, open] of DATABASES) results.push(await backlogBench(label, open, backlog));
  return results;
}
