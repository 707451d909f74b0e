/**
 * Outbox costs, each against a raw baseline measured in the same run, on the real PostgreSQL
 * and on PGlite:
 * - write: `writeOutboxEvent` (validation, envelope, INSERT + NOTIFY) in its own transaction vs a
 *   raw INSERT of the same row in its own transaction;
 * - relay: `runOnce()` batches with a recording publisher vs a raw loop of
 *   `SELECT … FOR UPDATE SKIP LOCKED` + `UPDATE … SENT` over the same rows.
 */
import { PGlite } from '@electric-sql/pglite';
import {
  RecordingPublisher,
  createOutboxRelay,
  migrateOutbox,
  newMessageId,
  pgliteDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
} from '../../src/runtime/index.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';
import { createTestSchema } from '../support/postgres.js';
import type { BenchResult } from './bench-result.js';

const WRITES = 1_000;
const RELAY_ROWS = 3_000;
const BATCH = 100;

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function writeBench(db: Database, schema: string, label: string): Promise<BenchResult> {
  const table = `"${schema}"."outbox_event"`;
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
            `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb)`,
            [
              newMessageId(),
              'Order',
              `r${i % 100}`,
              'test.OrderPlaced',
              1,
              JSON.stringify({ orderId: `r${i % 100}`, amount: i }),
              new Date().toISOString(),
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
    note: 'includes strict validation, envelope and NOTIFY',
  };
}

async function relayBench(db: Database, schema: string, label: string): Promise<BenchResult> {
  const table = `"${schema}"."outbox_event"`;
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
          `SELECT id::text AS id, payload FROM ${table} WHERE status = 'READY' AND available_at <= now()
           ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [BATCH],
        );
        for (const row of rows.rows) if (row.payload !== undefined) rawPublished++;
        if (rows.rows.length > 0) {
          await tx.query(
            `UPDATE ${table} SET status = 'SENT', sent_at = now() WHERE id = ANY($1::text::bigint[])`,
            [`{${rows.rows.map((r) => r.id).join(',')}}`],
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
