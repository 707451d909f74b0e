/**
 * A broker paused (SIGSTOP) 250 ms of every 350 ms, 14 times, while the outbox relay publishes
 * through `kafkaRelayPublisher` and the `publish…` helpers' `publishKafkaEnvelope` is called
 * concurrently on the same producer. Per run it counts, against the whole topic read back with a
 * raw kafkajs consumer: acknowledged records that are absent (outbox rows SENT and helper calls
 * that resolved), duplicates, and rows not SENT once the broker is healthy again. No
 * acknowledged record may be absent and no row may stay unsent; duplicates are allowed and
 * reported. A consumer with the inbox guard on the real PostgreSQL reads the topic through the
 * same stalls (with the same adapter) and writes one effect row per handled delivery: every
 * acknowledged record must have exactly one effect — none missing, none doubled — so the
 * duplicates the stalls cause are absorbed by the inbox, not passed on. Each round writes two rows
 * per aggregate in one transaction, so every claim of a round (and rows that pile up during a
 * pause) goes out as chains (several rows of one aggregate in one send) while the broker stalls;
 * per aggregate, no row's first copy on the topic may come before the first copy of a row
 * written before it.
 *
 * Runs on a broker of its own, never the shared one. EVGEN_STALL_RUNS sets the runs per adapter
 * (default 2, what the suite runs; many more by hand).
 */
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  createKafkaConsumerRunner,
  createOutboxRelay,
  kafkaRelayPublisher,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  publishKafkaEnvelope,
  writeOutboxEvent,
  type ConsumerContext,
  type Envelope,
} from 'evgen/runtime';
import { createTestSchema } from '../support/postgres.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from '../outbox/support/test-event.js';
import { startExtraKafkaBroker, type ExtraKafkaBroker } from '../support/kafka/broker.js';
import { GC_PAUSE_RHYTHM, stallBroker } from '../support/kafka/broker-stall.js';
import { createTestKafka, KAFKA_CLIENTS, waitFor } from '../support/kafka/test-kafka.js';

const RUNS = Number(process.env.EVGEN_STALL_RUNS ?? 2);
const AGGREGATES = 24;
/**
 * Rows per aggregate in each write round (one transaction). Two commit together, so a claim
 * takes them as one chain whatever the timing: rows piling up behind a stalled send alone did
 * not always make one on a loaded host (a send that outlives the pause without timing out
 * leaves a single row behind it).
 */
const ROWS_PER_AGGREGATE = 2;
const PARTITIONS = 6;
/** Concurrent helper calls started per stall period. */
const HELPER_CALLS = 12;
const REQUEST_TIMEOUT_MS = 200;

let broker: ExtraKafkaBroker | undefined;
beforeAll(async () => {
  broker = await startExtraKafkaBroker();
}, 180_000);
afterAll(async () => {
  await broker?.destroy();
}, 60_000);

/** Every record of `topic` (message ids from the headers), read from the beginning to the current end. */
async function readWholeTopic(brokers: string, topic: string, groupId: string): Promise<string[]> {
  const kafka = new kafkajs.Kafka({
    clientId: 'evgen-stall-reader',
    brokers: [brokers],
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) ends.set(p.partition, BigInt(p.high));
  } finally {
    await admin.disconnect();
  }
  const ids: string[] = [];
  const next = new Map<number, bigint>();
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        ids.push(String(message.headers?.messageId ?? ''));
        next.set(partition, BigInt(message.offset) + 1n);
      },
    });
    await waitFor(
      'the whole topic read back',
      () =>
        [...ends].every(([partition, end]) => (next.get(partition) ?? 0n) >= end)
          ? true
          : undefined,
      60_000,
    );
  } finally {
    await consumer.disconnect();
  }
  return ids;
}

const only = process.env.EVGEN_STALL_ADAPTER;
describe.each(KAFKA_CLIENTS.filter((client) => only === undefined || client.name === only))(
  'acknowledged records under broker stalls: $name',
  ({ create }) => {
    for (let run = 1; run <= RUNS; run++) {
      it(`run ${run}: none acknowledged is lost, no row stays unsent`, async () => {
        const kafka = await createTestKafka(create, broker!.brokers);
        const pgSchema = await createTestSchema('evgen_kafka_stall');
        const closers: (() => Promise<unknown>)[] = [];
        try {
          const [topic, retryTopic, deadLetterTopic] = await kafka.createTopics([
            { topic: 'orders', partitions: PARTITIONS },
            { topic: 'stall-consumer.retry', partitions: PARTITIONS },
            { topic: 'stall-consumer.dlt', partitions: 1 },
          ]);
          const { schema } = pgSchema;
          const db = postgresDatabase(pgSchema.pool);
          await migrateOutbox(db, { schema });
          await migrateInbox(db, { schema });
          // No unique key on purpose: a delivery the inbox let through twice shows as two rows.
          await db.query(
            `CREATE TABLE "${schema}".effects (id serial PRIMARY KEY, message_id text NOT NULL)`,
          );
          // A request timeout shorter than a pause: the client gives up on requests the broker
          // stores once it runs again, which is what a loaded host does to the default timeout.
          const producer = await create({
            brokers: [broker!.brokers],
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
          }).producer({ timeoutMs: 5_000 });
          closers.push(() => producer.close());
          // The most records of one aggregate in one send while the broker stalls: chains (several
          // of a key in one record batch) are what this test must exercise.
          let longestChain = 0;
          const send = producer.send.bind(producer);
          producer.send = (records) => {
            const perKey = new Map<string, number>();
            for (const { key } of records)
              if (String(key).startsWith('order-'))
                perKey.set(String(key), (perKey.get(String(key)) ?? 0) + 1);
            longestChain = Math.max(longestChain, ...perKey.values());
            return send(records);
          };

          let round = 0;
          const writeRound = () =>
            db.transaction(async (tx) => {
              round++;
              for (let a = 0; a < AGGREGATES; a++) {
                for (let r = 0; r < ROWS_PER_AGGREGATE; r++)
                  await writeOutboxEvent(
                    tx,
                    orderPlacedV1,
                    { orderId: `order-${a}`, amount: round },
                    {},
                    { schema, notifyChannel: false },
                  );
              }
            });
          const helperAcknowledged: Envelope[] = [];
          let helperRejected = 0;
          const helperRound = (period: number) =>
            Promise.all(
              Array.from({ length: HELPER_CALLS }, async (_, i) => {
                const envelope = createEnvelope(orderPlacedV1, {
                  orderId: `direct-${i}`,
                  amount: period,
                });
                try {
                  await publishKafkaEnvelope(
                    producer,
                    envelope,
                    { topic: 'orders' },
                    {
                      prefix: kafka.prefix,
                    },
                  );
                  helperAcknowledged.push(envelope);
                } catch {
                  helperRejected++;
                }
              }),
            );

          const relay = createOutboxRelay({
            db,
            schema,
            notifyChannel: false,
            pollIntervalMs: 50,
            publisher: kafkaRelayPublisher(
              producer,
              { [orderPlacedV1.eventType]: { topic: 'orders' } },
              { prefix: kafka.prefix },
            ),
          });
          closers.push(() => relay.stop({ timeoutMs: 10_000 }));

          // The consumer runs through the stalls too, on a client with default timeouts.
          const consumer = createKafkaConsumerRunner({
            handler: createInboxConsumer(
              { name: 'stall-consumer', descriptors: [orderPlacedV1] },
              {
                db,
                inbox: { schema },
                handlers: {
                  [orderPlacedV1.eventType]: {
                    1: async (
                      envelope: Envelope<string, 1, OrderPlacedV1Payload>,
                      ctx: ConsumerContext,
                    ) => {
                      await ctx.tx.query(
                        `INSERT INTO "${schema}".effects (message_id) VALUES ($1)`,
                        [envelope.messageId],
                      );
                    },
                  },
                },
              },
            ),
            kafka: {
              client: create({ brokers: [broker!.brokers] }),
              routes: {
                consumer: 'stall-consumer',
                groupId: kafka.group('stall-consumer'),
                topics: [topic!],
                retry: [{ topic: retryTopic!, delayMs: 200 }],
                deadLetter: deadLetterTopic!,
              },
            },
          });
          closers.push(() => consumer.stop());
          await consumer.start();

          await writeRound();
          await relay.start();

          // Rows and helper calls keep arriving through every pause; only chains sent from here on
          // count (the first round may go out before the broker's first pause).
          longestChain = 0;
          const stall = stallBroker(broker!.pid()!, GC_PAUSE_RHYTHM);
          const load: Promise<unknown>[] = [];
          for (let period = 0; period < GC_PAUSE_RHYTHM.times; period++) {
            load.push(writeRound(), helperRound(period));
            await new Promise((resolve) => setTimeout(resolve, GC_PAUSE_RHYTHM.periodMs));
          }
          await stall;
          await Promise.all(load);

          const statusCounts = async () => {
            const { rows } = await db.query<{ status: string; n: string }>(
              `SELECT status, count(*) AS n FROM "${schema}".outbox_event GROUP BY status`,
            );
            return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
          };
          const total = round * AGGREGATES * ROWS_PER_AGGREGATE;
          const settled = await waitFor(
            'every row SENT after the stalls',
            async () => {
              const counts = await statusCounts();
              return counts.SENT === total ? counts : undefined;
            },
            90_000,
          ).catch(() => undefined);
          await relay.stop({ timeoutMs: 10_000 });
          const finalCounts = settled ?? (await statusCounts());

          const sent = await db.query<{ event_id: string; aggregate_id: string }>(
            `SELECT event_id, aggregate_id FROM "${schema}".outbox_event WHERE status = 'SENT' ORDER BY id`,
          );
          const acknowledged = new Set([
            ...sent.rows.map((row) => row.event_id),
            ...helperAcknowledged.map((envelope) => envelope.messageId),
          ]);
          const stored = await readWholeTopic(broker!.brokers, topic!, kafka.group('reader'));
          const storedIds = new Set(stored);
          const lost = [...acknowledged].filter((id) => !storedIds.has(id));
          const duplicates = stored.length - storedIds.size;
          // Per aggregate, each row's first copy on the topic comes after the first copy of every
          // row written before it (duplicates may follow; an overtaking row may not).
          const firstSeen = [...new Set(stored)];
          const outOfOrder = [...new Set(sent.rows.map((row) => row.aggregate_id))].filter(
            (aggregate) => {
              const written = sent.rows
                .filter((row) => row.aggregate_id === aggregate)
                .map((row) => row.event_id);
              const mine = new Set(written);
              return (
                JSON.stringify(firstSeen.filter((id) => mine.has(id))) !== JSON.stringify(written)
              );
            },
          );
          const unsent = total - (finalCounts.SENT ?? 0);

          // Every stored record reaches the consumer at least once: wait until each stored
          // messageId has an effect and the runner has settled as many deliveries as are stored.
          const effectCounts = async () => {
            const { rows } = await db.query<{ message_id: string; n: string }>(
              `SELECT message_id, count(*) AS n FROM "${schema}".effects GROUP BY message_id`,
            );
            return new Map(rows.map((row) => [row.message_id, Number(row.n)]));
          };
          await waitFor(
            'the consumer handled every stored record',
            async () => {
              const counts = await effectCounts();
              const settledDeliveries =
                consumer.metrics().handled + consumer.metrics().deadLettered;
              return [...storedIds].every((id) => counts.has(id)) &&
                settledDeliveries >= stored.length
                ? true
                : undefined;
            },
            90_000,
          ).catch(() => undefined);
          await consumer.stop();
          const effects = await effectCounts();
          const consumed = consumer.metrics();
          const noEffect = [...acknowledged].filter((id) => !effects.has(id)).length;
          const doubled = [...effects.values()].filter((n) => n > 1).length;
          console.log(
            `[broker-stall] ${kafka.prefix} run ${run}: acknowledged ${acknowledged.size} ` +
              `(rows ${sent.rows.length}, helper ${helperAcknowledged.length}), ` +
              `acknowledged but absent ${lost.length}, duplicates ${duplicates}, ` +
              `rows not SENT ${unsent} ${JSON.stringify(finalCounts)}, helper rejected ${helperRejected}, ` +
              `aggregates out of order ${outOfOrder.length}, longest chain in one send ${longestChain}; ` +
              `consumer: acknowledged without effect ${noEffect}, doubled effects ${doubled}, ` +
              `inbox duplicates ${consumed.duplicates}, dead letters ${consumed.deadLettered}`,
          );
          expect({ lost: lost.length, unsent, noEffect, doubled, outOfOrder }).toEqual({
            lost: 0,
            unsent: 0,
            noEffect: 0,
            doubled: 0,
            outOfOrder: [],
          });
          expect(longestChain).toBeGreaterThan(1);
          // Each duplicate record on the topic reached the inbox and was absorbed there.
          expect(consumed.duplicates).toBeGreaterThanOrEqual(duplicates);
          expect(consumed.deadLettered).toBe(0);
          expect(acknowledged.size).toBeGreaterThan(total);
        } finally {
          for (const close of closers.reverse()) await close().catch(() => undefined);
          await kafka.cleanup().catch(() => undefined);
          await pgSchema.drop();
        }
      }, 240_000);
    }
  },
);
