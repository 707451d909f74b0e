/**
 * Relay → Kafka against a raw producer doing the same work, per client adapter, in the same run
 * (real PostgreSQL, the shared test broker), medians of ≥ 3 alternating samples with spread:
 * the outbox relay at its defaults (batch 100, maxInFlight 100), running its loop (`start`), through
 * `kafkaRelayPublisher` (claim, acknowledged send with acks = all on an idempotent producer,
 * mark SENT) vs the same adapter's idempotent producer sending the same kind of records in sends
 * of 100 (the relay's batch), each awaited — no database. Goal: ratio ≥ 0.7.
 * Framed: the same relay with the event marked `wireFormat: 'confluent'` (ids from the real
 * registry, resolved once and cached) vs the same relay writing plain JSON, in the same run.
 */
import {
  createOutboxRelay,
  createSchemaIds,
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  writeOutboxEvent,
  type Envelope,
  type KafkaProducer,
} from '../../src/runtime/index.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { TEST_REGISTRY_URL } from '../support/registry/apicurio.js';
import { registerStockCounted } from './registered-stock-counted.js';
import { SAMPLES, SMOKE, fromSamples, type BenchResult } from './bench-result.js';
import { stockCountedEvent } from './stock-counted.js';

const MESSAGES = SMOKE ? 200 : 2_000;
const AGGREGATES = 200;
const WINDOW = 100;

const stockCounted = stockCountedEvent();

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const registered = await registerStockCounted();
  try {
    return await runBench(registered.subject);
  } finally {
    await registered.remove();
  }
}

async function runBench(subject: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    const pg = await createTestSchema('evgen_bench_kafka');
    const kafka = await createTestKafka(create);
    const producer: KafkaProducer = await create({ brokers: [kafka.brokers] }).producer();
    try {
      const schema = pg.schema;
      const db = postgresDatabase(pg.pool);
      await migrateOutbox(db, { schema });
      const [, rawTopic] = await kafka.createTopics([
        { topic: 'relay', partitions: 6 },
        { topic: 'raw', partitions: 6 },
      ]);
      let counter = 0;

      const schemaIds = createSchemaIds({
        registry: { url: TEST_REGISTRY_URL },
        subjectNameStrategy: () => subject,
      });
      const relaySample = async (count: number, framed = false): Promise<number> => {
        for (let start = 0; start < count; start += 100) {
          await db.transaction(async (tx) => {
            for (let i = start; i < Math.min(count, start + 100); i++)
              await writeOutboxEvent(
                tx,
                stockCounted,
                { sku: `SKU-${i % AGGREGATES}`, quantity: counter++ },
                {},
                { schema, notifyChannel: false },
              );
          });
        }
        let published = 0;
        let done!: () => void;
        let failed!: (error: Error) => void;
        const allPublished = new Promise<void>((resolve, reject) => {
          done = resolve;
          failed = reject;
        });
        const relay = createOutboxRelay({
          db,
          schema,
          notifyChannel: false,
          publisher: framed
            ? kafkaRelayPublisher(
                producer,
                { [stockCounted.eventType]: { topic: 'relay', wireFormat: 'confluent' } },
                { prefix: kafka.prefix, wireFormat: { schemaIds } },
              )
            : kafkaRelayPublisher(
                producer,
                { [stockCounted.eventType]: { topic: 'relay' } },
                { prefix: kafka.prefix },
              ),
          hooks: {
            onFailed: (_message, failure) =>
              failed(new Error(`kafka relay bench: a send failed: ${String(failure.error)}`)),
            onPublished: () => {
              if (++published >= count) done();
            },
          },
        });
        try {
          return (
            count /
            (await timed(async () => {
              await relay.start();
              await allPublished;
            }))
          );
        } finally {
          await relay.stop();
        }
      };

      const rawSample = async (count: number): Promise<number> => {
        const records = Array.from({ length: count }, (_, i) => {
          const envelope: Envelope = {
            messageId: crypto.randomUUID(),
            eventType: stockCounted.eventType,
            schemaVersion: 1,
            aggregateType: 'Stock',
            aggregateId: `SKU-${i % AGGREGATES}`,
            occurredAt: new Date().toISOString(),
            payload: { sku: `SKU-${i % AGGREGATES}`, quantity: i },
          };
          return envelopeToKafkaRecord(envelope, rawTopic!);
        });
        return (
          count /
          (await timed(async () => {
            for (let i = 0; i < count; i += WINDOW)
              await producer.send(records.slice(i, i + WINDOW));
          }))
        );
      };

      await relaySample(Math.min(MESSAGES, 200));
      await relaySample(Math.min(MESSAGES, 200), true);
      await rawSample(Math.min(MESSAGES, 200));
      const relayRates: number[] = [];
      const framedRates: number[] = [];
      const rawRates: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        rawRates.push(await rawSample(MESSAGES));
        relayRates.push(await relaySample(MESSAGES));
        framedRates.push(await relaySample(MESSAGES, true));
      }
      results.push(
        fromSamples(
          {
            name: `relay → Kafka (${name}), defaults (batch ${WINDOW}, maxInFlight ${WINDOW}), ${AGGREGATES} aggregates`,
            unit: 'events/s',
            baselineName: `raw ${name} idempotent producer (acks=all), sends of ${WINDOW} awaited one by one`,
            goal: { ratio: 0.7, better: 'higher' },
            note: `${MESSAGES} events per sample, 6 partitions`,
          },
          relayRates,
          rawRates,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), Confluent wire format (framed, ids cached)`,
            unit: 'events/s',
            baselineName: 'the same relay writing plain JSON',
            goal: { ratio: 0.9, better: 'higher' },
            note: `${MESSAGES} events per sample, 6 partitions, ids from the real registry`,
          },
          framedRates,
          relayRates,
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
