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

/** An outbox of `rows` READY rows of `aggregates` aggregates, round robin, behind 1 000 SENT rows. */
async function fill(db: Database, schema: string, aggregates: number, rows: number): Promise<void> {
  const table = db.dialect.qualifiedName(schema, 'outbox_event');
  const mysql = db.dialect.name === 'mysql';
  const total = 1_000 + rows;
  const aggregate = mysql
    ? `IF(g <= 1000, CONCAT('old-', g), CONCAT('o', g % ${aggregates}))`
    : `CASE WHEN g <= 1000 THEN 'old-' || g ELSE 'o' || (g % ${aggregates}) END`;
  const status = `CASE WHEN g <= 1000 THEN 'SENT' ELSE 'READY' END`;
  await db.query(
    mysql
      ? `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
           payload, occurred_at, headers, status, available_at, created_at)
         SELECT UUID(), 'order', ${aggregate}, 'OrderPlaced', 1, '{}', UTC_TIMESTAMP(3), '{}', ${status},
           UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
         FROM (SELECT seq AS g FROM seq_1_to_${total}) s`
      : `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
           payload, occurred_at, status)
         SELECT gen_random_uuid(), 'order', ${aggregate}, 'OrderPlaced', 1, '{}', now(), ${status}
         FROM generate_series(1, ${total}) g`,
  );
}

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
  open: () => Promise<{ db: Database; schema: string; drop: () => Promise<void> }>,
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
      await fill(side.db, side.schema, backlog.aggregates, rows);
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

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const backlog of BACKLOGS) {
    results.push(
      await backlogBench(
        'PostgreSQL',
        async () => {
          const test = await createTestSchema('evgen_bench_backlog');
          return { db: postgresDatabase(test.pool), schema: test.schema, drop: () => test.drop() };
        },
        backlog,
      ),
    );
    results.push(
      await backlogBench(
        'MariaDB',
        async () => {
          const test = await createMariadbDatabase('evgen_bench_backlog');
          return { db: mysqlDatabase(test.pool), schema: test.schema, drop: () => test.drop() };
        },
        backlog,
      ),
    );
  }
  return results;
}
