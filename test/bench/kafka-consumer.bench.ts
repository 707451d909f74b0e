/**
 * Kafka consumer runner with the inbox guard vs a raw consumer doing the same work, measured in
 * the same run on the real broker and the real PostgreSQL, for each client adapter:
 * - subject: `createKafkaConsumerRunner` with an inbox-guarded handler (`handleWithInbox` + one
 *   INSERT), committing positions after the transaction (coalesced);
 * - baseline: a consumer on the same transport interface doing the same SQL (BEGIN, inbox INSERT
 *   … ON CONFLICT, INSERT, UPDATE processed_at, COMMIT) and committing offset + 1 after each
 *   record without waiting for it (the cheapest a raw consumer can do), same partition concurrency.
 * Both read the same records (own consumer groups, from the beginning). As in the RabbitMQ bench,
 * both sides first handle a few records untimed (JIT, database connections), then medians of
 * ≥ 3 samples with their spread, the order rotating from sample to sample: one cold sample
 * with the runner always first charged it with the process's warm-up.
 * Framed: the same runner (given `schemaIds`, as a service reading Confluent's wire format is)
 * reading the same records framed (magic byte, the id the real registry gave the event's v1, the
 * same JSON; same headers) vs reading them plain, in the same run: the frame check, the id lookup
 * (one registry call, in the warm-up) and the id-vs-envelope check per record.
 */
import {
  createEnvelope,
  createKafkaConsumerRunner,
  createSchemaIds,
  frameConfluent,
  handleWithInbox,
  migrateInbox,
  postgresDatabase,
  type Envelope,
} from '../../src/runtime/index.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { TEST_REGISTRY_URL } from '../support/registry/apicurio.js';
import { SAMPLES, fromSamples, type BenchResult } from './bench-result.js';
import { timed, until } from './bench-timing.js';
import { rawInboxHandle } from './raw-inbox.js';
import { runnerRate } from './runner-rate.js';
import { registerStockCounted } from './registered-stock-counted.js';
import { stockCountedEvent, type StockCounted } from './stock-counted.js';

const MESSAGES = 2_000;
/** Records each side handles, untimed, before the samples. */
const WARM_UP = 200;
const PARTITIONS = 4;
const CONCURRENCY = 4;

type Counted = StockCounted;
const stockCounted = stockCountedEvent();

export async function run(): Promise<BenchResult[]> {
  const registered = await registerStockCounted();
  try {
    return await runBench(registered.subject, registered.id);
  } finally {
    await registered.remove();
  }
}

async function runBench(subject: string, schemaId: number): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    const kafka = await createTestKafka(create);
    const pg = await createTestSchema('evgen_bench_kafka');
    const client = create({ brokers: [kafka.brokers] });
    const producer = await client.producer();
    const { schema } = pg;
    const db = postgresDatabase(pg.pool);
    try {
      await migrateInbox(db, { schema });
      await pg.pool.query(
        `CREATE TABLE "${schema}".stock_count (sku text NOT NULL, quantity int NOT NULL, message_id text NOT NULL)`,
      );
      const [topic, framedTopic, retry, dlt] = await kafka.createTopics([
        { topic: 'bench.events', partitions: PARTITIONS },
        { topic: 'bench.framed', partitions: PARTITIONS },
        { topic: 'bench-consumer.retry.1s', partitions: PARTITIONS },
        { topic: 'bench-consumer.dlt', partitions: 1 },
      ]);
      const envelopes: Envelope[] = [];
      for (let i = 0; i < MESSAGES; i++)
        envelopes.push(createEnvelope(stockCounted, { sku: `SKU-${i % 300}`, quantity: i }));
      for (const [to, framed] of [
        [topic!, false],
        [framedTopic!, true],
      ] as const) {
        for (let start = 0; start < MESSAGES; start += 200) {
          await producer.send(
            envelopes.slice(start, start + 200).map((envelope) => {
              const json = JSON.stringify(envelope);
              return {
                topic: to,
                key: envelope.aggregateId,
                value: framed ? frameConfluent(schemaId, Buffer.from(json)) : json,
                headers: { messageId: envelope.messageId, eventType: envelope.eventType },
              };
            }),
          );
        }
      }
      // One instance for every runner sample: the id is looked up once, in the warm-up.
      const schemaIds = createSchemaIds({
        registry: { url: TEST_REGISTRY_URL },
        subjectNameStrategy: () => subject,
      });
      const insert = (tx: { query: typeof pg.pool.query }, envelope: Envelope) => {
        const payload = envelope.payload as Counted;
        return tx.query(
          `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
          [payload.sku, payload.quantity, envelope.messageId],
        );
      };

      let group = 0;
      const reset = () =>
        pg.pool.query(`TRUNCATE "${schema}".stock_count, "${schema}".inbox_message`);

      // Subject: the runner with the inbox guard; msg/s over the first `count` records, plain or
      // framed.
      const runnerSample = async (count: number, framed = false): Promise<number> => {
        await reset();
        const runner = createKafkaConsumerRunner({
          handler: {
            name: 'bench-consumer',
            handle: (raw) =>
              handleWithInbox(
                db,
                { schema, consumer: 'bench-consumer', envelope: raw as Envelope },
                (tx, envelope) => insert(tx as never, envelope).then(() => undefined),
              ),
          },
          kafka: {
            client,
            routes: {
              consumer: 'bench-consumer',
              groupId: kafka.group(`bench-runner-${group++}`),
              topics: [framed ? framedTopic! : topic!],
              retry: [{ topic: retry!, delayMs: 1_000 }],
              deadLetter: dlt!,
            },
            partitionConcurrency: CONCURRENCY,
            schemaIds,
          },
        });
        return runnerRate(runner, count);
      };

      // Baseline: a raw consumer doing the same SQL.
      const rawSample = async (count: number): Promise<number> => {
        await reset();
        const raw = client.consumer({
          groupId: kafka.group(`bench-raw-${group++}`),
          topics: [topic!],
          partitionConcurrency: CONCURRENCY,
        });
        let rawHandled = 0;
        try {
          return (
            count /
            (await timed(async () => {
              await raw.start({
                onRecord: async (record) => {
                  const envelope = JSON.parse(record.value!.toString('utf8')) as Envelope;
                  await rawInboxHandle(pg.pool, schema, 'bench-consumer', envelope);
                  void raw
                    .commit([
                      {
                        topic: record.topic,
                        partition: record.partition,
                        offset: (BigInt(record.offset) + 1n).toString(),
                      },
                    ])
                    .catch(() => undefined);
                  rawHandled++;
                },
              });
              await until('the raw consumer to handle every record', () => rawHandled >= count);
            }))
          );
        } finally {
          await raw.close();
        }
      };

      await runnerSample(WARM_UP);
      await runnerSample(WARM_UP, true);
      await rawSample(WARM_UP);
      const runnerRates: number[] = [];
      const framedRates: number[] = [];
      const rawRates: number[] = [];
      const sides = [
        async () => rawRates.push(await rawSample(MESSAGES)),
        async () => runnerRates.push(await runnerSample(MESSAGES)),
        async () => framedRates.push(await runnerSample(MESSAGES, true)),
      ];
      for (let sample = 0; sample < SAMPLES; sample++) {
        // The order rotates from sample to sample: no side always runs first or last.
        for (let side = 0; side < sides.length; side++)
          await sides[(sample + side) % sides.length]!();
        console.error(
          `  ${name} sample ${sample}: runner ${runnerRates.at(-1)!.toFixed(0)} (framed ${framedRates.at(-1)!.toFixed(0)}) vs raw ${rawRates.at(-1)!.toFixed(0)} msg/s`,
        );
      }

      results.push(
        fromSamples(
          {
            name: `Kafka consumer runner + inbox guard (${name}, ${CONCURRENCY} partitions at once)`,
            unit: 'msg/s',
            baselineName: `raw ${name} consumer doing the same SQL, commit per record not awaited`,
            goal: { ratio: 0.9, better: 'higher' },
            note: `${MESSAGES} records per sample, ${PARTITIONS} partitions, pg pool of 10; includes group join; warm-up ${WARM_UP} records, order rotating`,
          },
          runnerRates,
          rawRates,
        ),
        fromSamples(
          {
            name: `Kafka consumer runner + inbox guard (${name}), Confluent-framed records (schemaIds, id looked up once)`,
            unit: 'msg/s',
            baselineName: 'the same runner reading the same records plain',
            goal: { ratio: 0.9, better: 'higher' },
            note: `${MESSAGES} records per sample, ${PARTITIONS} partitions, id from the real registry; order rotating`,
          },
          framedRates,
          runnerRates,
        ),
      );
    } finally {
      await producer.close();
      await kafka.cleanup();
      await pg.drop();
    }
  }
  return results;
}
