/**
 * Outbox costs, each against a raw baseline measured in the same run, on the real PostgreSQL,
 * on PGlite and on the real MariaDB (the same raw statements in its dialect):
 * - write: `writeOutboxEvent` (validation, envelope, INSERT + NOTIFY) in its own transaction vs a
 *   raw INSERT of the same row in its own transaction;
 * - relay: `runOnce()` batches with a recording publisher vs a raw loop of
 *   `SELECT … FOR UPDATE SKIP LOCKED` + `UPDATE … SENT` over the same rows;
 * - wake-up (MariaDB, no NOTIFY): commit-to-publish latency of a relay in the writer's process
 *   (woken after the commit), and of one no wake-up reaches (as for a writer in another process)
 *   with adaptive idle polling (50 ms floor, 1 s ceiling), each vs one that polls every second.
 */
import { PGlite } from '@electric-sql/pglite';
import {
  RecordingPublisher,
  createOutboxRelay,
  migrateOutbox,
  mysqlDatabase,
  newMessageId,
  pgliteDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
} from '../../src/runtime/index.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';
import { mysqlTimestamp } from '../../src/runtime/db/sql-timestamp.js';
import { median, SMOKE, type BenchResult } from './bench-result.js';

const WRITES = 1_000;
const RELAY_ROWS = 3_000;
const BATCH = 100;

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function writeBench(db: Database, schema: string, label: string): Promise<BenchResult> {
  const table = db.dialect.qualifiedName(schema, 'outbox_event');
  const mysql = db.dialect.name === 'mysql';
  // Warm-up: plans and connections.
  for (let i = 0; i < 50; i++) {
    await db.transaction((tx) =>
      writeOutboxEvent(tx, orderPlacedV1, { orderId: `w${i}`, amount: i }, {}, { schema }),
    );
  }
  // Alternating blocks, so drift in machine load hits both sides alike.
  let raw = 0;
  let outbox = 0;
  for (let block = 0; block < WRITES; block += 100) {
    raw += await timed(async () => {
      for (let i = block; i < block + 100; i++) {
        await db.transaction(async (tx) => {
          await tx.query(
            mysql
              ? `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers, available_at, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`
              : `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb)`,
            [
              newMessageId(),
              'Order',
              `r${i % 100}`,
              'test.OrderPlaced',
              1,
              JSON.stringify({ orderId: `r${i % 100}`, amount: i }),
              mysql ? mysqlTimestamp(new Date()) : new Date().toISOString(),
              '{}',
            ],
          );
        });
      }
    });
    outbox += await timed(async () => {
      for (let i = block; i < block + 100; i++) {
        await db.transaction((tx) =>
          writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId: `o${i % 100}`, amount: i },
            {},
            { schema },
          ),
        );
      }
    });
  }
  return {
    name: `outbox write, 1 event per transaction (${label})`,
    unit: 'ops/s',
    subject: WRITES / outbox,
    baselineName: 'raw INSERT of the same row',
    baseline: WRITES / raw,
    note: mysql
      ? 'includes strict validation, envelope and the in-process wake after commit'
      : 'includes strict validation, envelope and NOTIFY',
  };
}

async function relayBench(db: Database, schema: string, label: string): Promise<BenchResult> {
  const table = db.dialect.qualifiedName(schema, 'outbox_event');
  const mysql = db.dialect.name === 'mysql';
  const fill = async () => {
    await db.query(`DELETE FROM ${table}`);
    for (let start = 0; start < RELAY_ROWS; start += 500) {
      await db.transaction(async (tx) => {
        for (let i = start; i < start + 500; i++) {
          await writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId: `a${i % 300}`, amount: i },
            {},
            { schema, notifyChannel: false },
          );
        }
      });
    }
  };
  await fill();
  let rawPublished = 0;
  const raw = await timed(async () => {
    for (;;) {
      const claimed = await db.transaction(async (tx) => {
        const rows = await tx.query<{ id: string; payload: unknown }>(
          mysql
            ? `SELECT CAST(id AS CHAR) AS id, payload FROM ${table} WHERE status = 'READY' AND available_at <= UTC_TIMESTAMP(3)
           ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`
            : `SELECT id::text AS id, payload FROM ${table} WHERE status = 'READY' AND available_at <= now()
           ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [BATCH],
        );
        for (const row of rows.rows) if (row.payload !== undefined) rawPublished++;
        if (rows.rows.length > 0) {
          await tx.query(
            mysql
              ? `UPDATE ${table} SET status = 'SENT', sent_at = UTC_TIMESTAMP(3) WHERE id IN (?)`
              : `UPDATE ${table} SET status = 'SENT', sent_at = now() WHERE id = ANY($1::text::bigint[])`,
            mysql ? [rows.rows.map((r) => r.id)] : [`{${rows.rows.map((r) => r.id).join(',')}}`],
          );
        }
        return rows.rows.length;
      });
      if (claimed === 0) break;
    }
  });
  await fill();
  const publisher = new RecordingPublisher();
  const relay = createOutboxRelay({
    db,
    publisher,
    schema,
    batchSize: BATCH,
    notifyChannel: false,
  });
  const subject = await timed(async () => {
    while ((await relay.runOnce()).claimed > 0);
  });
  if (publisher.published.length !== RELAY_ROWS || rawPublished !== RELAY_ROWS) {
    throw new Error(
      `relay bench published ${publisher.published.length} / raw ${rawPublished}, expected ${RELAY_ROWS}`,
    );
  }
  return {
    name: `relay throughput, batch ${BATCH}, 300 aggregates (${label})`,
    unit: 'rows/s',
    subject: RELAY_ROWS / subject,
    baselineName: 'raw SKIP LOCKED select + UPDATE SENT loop',
    baseline: RELAY_ROWS / raw,
    note: 'relay adds lease, per-aggregate order check and envelope rebuild',
  };
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const pg = await createTestSchema('evgen_bench_outbox');
  try {
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    results.push(await writeBench(db, pg.schema, 'PostgreSQL'));
    results.push(await relayBench(db, pg.schema, 'PostgreSQL'));
  } finally {
    await pg.drop();
  }
  const maria = await createMariadbDatabase('evgen_bench_outbox');
  try {
    const db = mysqlDatabase(maria.pool);
    await migrateOutbox(db, { schema: maria.schema });
    results.push(await writeBench(db, maria.schema, 'MariaDB'));
    results.push(await relayBench(db, maria.schema, 'MariaDB'));
    results.push(...(await wakeBenches(db, maria.schema)));
  } finally {
    await maria.drop();
  }
  const pglite = new PGlite();
  try {
    const db = pgliteDatabase(pglite);
    await db.query('CREATE SCHEMA bench');
    await migrateOutbox(db, { schema: 'bench' });
    results.push(await writeBench(db, 'bench', 'PGlite'));
    results.push(await relayBench(db, 'bench', 'PGlite'));
  } finally {
    await pglite.close();
  }
  return results;
}

/**
 * Commit-to-publish latency in ms of `events` writes, one at a time, to a started relay that
 * polls between `minPollIntervalMs` and 1 s when idle.
 */
async function commitToPublish(
  db: Database,
  schema: string,
  events: number,
  notifyChannel: string | false,
  minPollIntervalMs: number,
): Promise<number[]> {
  let published: (() => void) | undefined;
  const relay = createOutboxRelay({
    db,
    schema,
    publisher: new RecordingPublisher(),
    notifyChannel,
    pollIntervalMs: 1_000,
    minPollIntervalMs,
    hooks: { onPublished: () => published?.() },
  });
  await relay.start();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < events; i++) {
      const seen = new Promise<void>((resolve) => (published = resolve));
      await db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: `wake${i}`, amount: i },
          {},
          { schema, notifyChannel },
        ),
      );
      const committed = process.hrtime.bigint();
      await seen;
      latencies.push(Number(process.hrtime.bigint() - committed) / 1e6);
      // Let the relay go idle again, at a random point of its poll interval.
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 500));
    }
  } finally {
    await relay.stop();
  }
  return latencies;
}

/**
 * MariaDB has no NOTIFY: the in-process wake after commit, and adaptive idle polling where no
 * wake-up arrives (a writer in another process; here `notifyChannel: false`), each vs polling at a
 * fixed 1 s interval. Writes come one at a time, 50–550 ms apart: steady, light traffic.
 */
async function wakeBenches(db: Database, schema: string): Promise<BenchResult[]> {
  const events = SMOKE ? 3 : 20;
  const woken = await commitToPublish(db, schema, events, 'evgen_outbox_bench', 1_000);
  const adaptive = await commitToPublish(db, schema, events, false, 50);
  const fixed = await commitToPublish(db, schema, events, false, 1_000);
  const baseline = {
    baselineName: 'polling only, fixed 1 s interval',
    baseline: median(fixed),
    baselineSamples: fixed,
  };
  return [
    {
      name: `relay wake-up, commit to publish, median of ${events} (MariaDB, relay in the writer's process)`,
      unit: 'ms',
      subject: median(woken),
      subjectSamples: woken,
      ...baseline,
      note: 'relays in other processes see the row by polling',
      goal: { ratio: 0.1, better: 'lower' },
    },
    {
      name: `relay adaptive idle polling, commit to publish, median of ${events} (MariaDB, no wake-up: a writer in another process)`,
      unit: 'ms',
      subject: median(adaptive),
      subjectSamples: adaptive,
      ...baseline,
      note: 'minPollIntervalMs 50 doubling to pollIntervalMs 1000 while idle; an outbox idle for long waits up to the ceiling',
      goal: { ratio: 0.5, better: 'lower' },
    },
  ];
}
