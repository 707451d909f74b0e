/**
 * Inbox costs on the real PostgreSQL, each against raw SQL doing the same work on one pooled
 * connection, rounds of both interleaved in the same run:
 * - guard: `handleWithInbox` (INSERT … ON CONFLICT, handler, UPDATE processed_at, COMMIT) per
 *   message vs a raw BEGIN + INSERT + UPDATE + COMMIT per message;
 * - consumer: the generated-style `consumer.handle(json)` (parse, reader validation, dispatch,
 *   guard) vs the same raw baseline;
 * - duplicate: redelivery of already handled messages through the guard vs a raw
 *   BEGIN + INSERT … ON CONFLICT DO NOTHING + COMMIT of already recorded ids (both skip the handler);
 * - batch: `handleBatchWithInbox`, 100 messages per transaction with a savepoint each, vs raw
 *   SQL with the same transactions and savepoints.
 * Every handler does one business INSERT, and so does the baseline (none for duplicates).
 */
import {
  createInboxConsumer,
  handleWithInbox,
  migrateInbox,
  postgresDatabase,
  type Envelope,
  type Transaction,
} from '../../src/runtime/index.js';
import { handleBatchWithInbox } from '../../src/runtime/inbox/inbox-batch.js';
import { parcelDescriptors, sentV2 } from '../inbox/support/test-events.js';
import { createTestSchema } from '../support/postgres.js';
import type { BenchResult } from './bench-result.js';

const MESSAGES = 2_000;
const BATCH = 100;
const ROUNDS = 10;

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function run(): Promise<BenchResult[]> {
  const test = await createTestSchema('evgen_bench_inbox');
  try {
    const db = postgresDatabase(test.pool);
    const schema = test.schema;
    await migrateInbox(db, { schema });
    await db.query(
      `CREATE TABLE "${schema}".effects (id bigserial PRIMARY KEY, message_id text NOT NULL)`,
    );
    await db.query(
      `CREATE TABLE "${schema}".raw_inbox (message_id text NOT NULL, consumer text NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), processed_at timestamptz, PRIMARY KEY (message_id, consumer))`,
    );
    const effect = async (tx: Transaction, envelope: Envelope) => {
      await tx.query(`INSERT INTO "${schema}".effects (message_id) VALUES ($1)`, [
        envelope.messageId,
      ]);
    };
    const envelopes = (n: number) => Array.from({ length: n }, () => sentV2());

    const rawRun = async (batch: Envelope[]) => {
      const client = await test.pool.connect();
      try {
        for (const envelope of batch) {
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO "${schema}".raw_inbox (message_id, consumer) VALUES ($1, $2)`,
            [envelope.messageId, 'bench'],
          );
          await client.query(`INSERT INTO "${schema}".effects (message_id) VALUES ($1)`, [
            envelope.messageId,
          ]);
          await client.query(
            `UPDATE "${schema}".raw_inbox SET processed_at = now() WHERE message_id = $1 AND consumer = $2`,
            [envelope.messageId, 'bench'],
          );
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    };
    /** Redelivery of ids already in raw_inbox: the conflict is the whole transaction. */
    const rawDuplicateRun = async (batch: Envelope[]) => {
      const client = await test.pool.connect();
      try {
        for (const envelope of batch) {
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO "${schema}".raw_inbox (message_id, consumer) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
            [envelope.messageId, 'bench'],
          );
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    };
    /** BATCH messages per transaction, a savepoint around each, as the batched guard does. */
    const rawBatchRun = async (list: Envelope[]) => {
      const client = await test.pool.connect();
      try {
        for (let i = 0; i < list.length; i += BATCH) {
          await client.query('BEGIN');
          for (const envelope of list.slice(i, i + BATCH)) {
            await client.query('SAVEPOINT message');
            await client.query(
              `INSERT INTO "${schema}".raw_inbox (message_id, consumer) VALUES ($1, $2)`,
              [envelope.messageId, 'bench'],
            );
            await client.query(`INSERT INTO "${schema}".effects (message_id) VALUES ($1)`, [
              envelope.messageId,
            ]);
            await client.query(
              `UPDATE "${schema}".raw_inbox SET processed_at = now() WHERE message_id = $1 AND consumer = $2`,
              [envelope.messageId, 'bench'],
            );
            await client.query('RELEASE SAVEPOINT message');
          }
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    };
    const guardRun = async (batch: Envelope[]) => {
      for (const envelope of batch)
        await handleWithInbox(db, { schema, consumer: 'bench', envelope }, effect);
    };
    // Warm-up: connections and plans.
    await rawRun(envelopes(100));
    await guardRun(envelopes(100));

    const results: BenchResult[] = [];
    /**
     * Interleaves rounds of the subject with rounds of the raw baseline, so drift in the shared
     * machine's load (fsync latency, other test runs) hits both alike.
     */
    const perMessage = {
      name: 'raw BEGIN+INSERT+UPDATE+COMMIT per message',
      run: () => rawRun(envelopes(MESSAGES / ROUNDS)),
    };
    const compare = async (
      name: string,
      subject: (round: number) => Promise<void>,
      baseline: { name: string; run: (round: number) => Promise<void> } = perMessage,
      note?: string,
    ) => {
      let rawSeconds = 0;
      let subjectSeconds = 0;
      for (let round = 0; round < ROUNDS; round++) {
        rawSeconds += await timed(() => baseline.run(round));
        subjectSeconds += await timed(() => subject(round));
      }
      results.push({
        name,
        unit: 'msg/s',
        subject: MESSAGES / subjectSeconds,
        baselineName: baseline.name,
        baseline: MESSAGES / rawSeconds,
        ...(note ? { note } : {}),
      });
    };
    const rounds = <T>(perRound: () => T[]) => Array.from({ length: ROUNDS }, perRound);

    const handled = rounds(() => envelopes(MESSAGES / ROUNDS));
    await compare('inbox guard, 1 message per transaction (pg)', (round) =>
      guardRun(handled[round]!),
    );
    // The same ids recorded by raw SQL (not timed), to be redelivered to the raw baseline.
    const rawHandled = rounds(() => envelopes(MESSAGES / ROUNDS));
    for (const batch of rawHandled) await rawRun(batch);
    await compare(
      'inbox guard, redelivered duplicates (pg)',
      (round) => guardRun(handled[round]!),
      {
        name: 'raw BEGIN+INSERT … ON CONFLICT DO NOTHING+COMMIT of recorded ids',
        run: (round) => rawDuplicateRun(rawHandled[round]!),
      },
      'both skip the handler and write nothing',
    );

    const consumer = createInboxConsumer(
      { name: 'bench-consumer', descriptors: parcelDescriptors },
      {
        db,
        inbox: { schema },
        handlers: {
          'parcel.ParcelSent': {
            2: (envelope: Envelope, ctx: { tx: Transaction }) => effect(ctx.tx, envelope),
          },
          'parcel.ParcelLost': { 1: async () => undefined },
        },
      },
    );
    const raws = rounds(() =>
      envelopes(MESSAGES / ROUNDS).map((envelope) => JSON.stringify(envelope)),
    );
    await compare(
      'consumer.handle(json): parse + validate + dispatch + guard (pg)',
      async (round) => {
        for (const raw of raws[round]!) await consumer.handle(raw);
      },
    );

    const batched = rounds(() => envelopes(MESSAGES / ROUNDS));
    const rawBatched = rounds(() => envelopes(MESSAGES / ROUNDS));
    await compare(
      `inbox guard, batched ${BATCH} per transaction with savepoints (pg)`,
      async (round) => {
        const list = batched[round]!;
        for (let i = 0; i < list.length; i += BATCH) {
          await handleBatchWithInbox(
            db,
            { schema, consumer: 'bench', envelopes: list.slice(i, i + BATCH) },
            effect,
          );
        }
      },
      {
        name: `raw SQL, ${BATCH} per transaction with a savepoint each`,
        run: (round) => rawBatchRun(rawBatched[round]!),
      },
    );
    return results;
  } finally {
    await test.drop();
  }
}
