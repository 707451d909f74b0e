/**
 * Relay → Kafka against a raw producer, per client adapter, measured in the same run (real
 * PostgreSQL, the shared test broker): the outbox relay publishing through `kafkaRelayPublisher`
 * (claim, acknowledged send with acks = all, mark SENT) vs the same adapter's idempotent producer
 * sending the same records in the same batch sizes the relay's sends had — no database, so the
 * baseline is the ceiling. Goal: ratio ≥ 0.7.
 */
import {
  createOutboxRelay,
  envelopeToKafkaRecord,
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  writeOutboxEvent,
  type Envelope,
  type EventVersionDescriptor,
  type KafkaOutboundRecord,
  type KafkaProducer,
} from '../../src/runtime/index.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import type { BenchResult } from './bench-result.js';

const MESSAGES = 3_000;

const stockCounted: EventVersionDescriptor<
  'bench.StockCounted',
  1,
  { sku: string; quantity: number }
> = {
  eventType: 'bench.StockCounted',
  schemaVersion: 1,
  aggregateType: 'Stock',
  aggregateIdProperty: 'sku',
  validatePayload: (payload) => ({ ok: true, value: payload as { sku: string; quantity: number } }),
  readPayload: (payload) => ({ ok: true, value: payload as { sku: string; quantity: number } }),
};

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    const pg = await createTestSchema('evgen_bench_kafka');
    const kafka = await createTestKafka(create);
    const producer = await create({ brokers: [kafka.brokers] }).producer();
    try {
      const schema = pg.schema;
      const db = postgresDatabase(pg.pool);
      await migrateOutbox(db, { schema });
      const [relayTopic, rawTopic] = await kafka.createTopics([
        { topic: 'relay', partitions: 6 },
        { topic: 'raw', partitions: 6 },
      ]);
      const envelopes: Envelope[] = [];
      for (let start = 0; start < MESSAGES; start += 500) {
        await db.transaction(async (tx) => {
          for (let i = start; i < Math.min(MESSAGES, start + 500); i++) {
            envelopes.push(
              await writeOutboxEvent(
                tx,
                stockCounted,
                { sku: `SKU-${i % 300}`, quantity: i },
                {},
                { schema, notifyChannel: false },
              ),
            );
          }
        });
      }

      // Subject: the relay, with a producer that records the batch sizes it was asked to send.
      const batchSizes: number[] = [];
      const recording: KafkaProducer = {
        send: (records) => {
          batchSizes.push(records.length);
          return producer.send(records);
        },
        partitionFor: (key, count) => producer.partitionFor(key, count),
        close: async () => undefined,
      };
      const relay = createOutboxRelay({
        db,
        schema,
        notifyChannel: false,
        batchSize: 500,
        concurrency: 64,
        publisher: kafkaRelayPublisher(
          recording,
          { [stockCounted.eventType]: { topic: 'relay' } },
          { prefix: kafka.prefix },
        ),
      });
      let published = 0;
      const relaySeconds = await timed(async () => {
        while (published < MESSAGES) {
          const result = await relay.runOnce();
          if (result.failed + result.dead > 0)
            throw new Error(`relay failed ${result.failed + result.dead} publishes`);
          published += result.published;
        }
      });

      // Baseline: the same records, the same batch sizes, straight to the producer.
      const records: KafkaOutboundRecord[] = envelopes.map((e) =>
        envelopeToKafkaRecord(e, rawTopic!),
      );
      const rawSeconds = await timed(async () => {
        let offset = 0;
        for (const size of batchSizes) {
          await producer.send(records.slice(offset, offset + size));
          offset += size;
        }
      });
      void relayTopic;
      // The relay's database work alone (same rows again, a publisher that resolves at once).
      await db.query(`UPDATE "${schema}".outbox_event SET status = 'READY', sent_at = NULL`);
      const dbOnly = createOutboxRelay({
        db,
        schema,
        notifyChannel: false,
        batchSize: 500,
        concurrency: 64,
        publisher: { publish: async () => undefined },
      });
      let marked = 0;
      const dbSeconds = await timed(async () => {
        while (marked < MESSAGES) marked += (await dbOnly.runOnce()).published;
      });
      const mean = batchSizes.reduce((a, b) => a + b, 0) / batchSizes.length;
      results.push({
        name: `relay → Kafka (${name})`,
        unit: 'msg/s',
        subject: MESSAGES / relaySeconds,
        baselineName: `raw ${name} producer, same batches`,
        baseline: MESSAGES / rawSeconds,
        note: `${MESSAGES} events, 300 aggregates, ${batchSizes.length} sends of ${mean.toFixed(1)} records on average, acks=all idempotent; the relay's database work alone: ${(MESSAGES / dbSeconds).toFixed(0)} msg/s; goal ≥ 0.7`,
      });
    } finally {
      await producer.close();
      await kafka.cleanup();
      await pg.drop();
    }
  }
  return results;
}
