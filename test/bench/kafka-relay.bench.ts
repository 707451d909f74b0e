/**
 * Relay → Kafka against a raw producer doing the same work, per client adapter, in the same run
 * (real PostgreSQL, the shared test broker), medians of ≥ 3 alternating samples with spread:
 * the outbox relay at its defaults (batch 100, maxInFlight 100), running its loop (`start`), through
 * `kafkaRelayPublisher` (claim, acknowledged send with acks = all on an idempotent producer,
 * mark SENT) vs the same adapter's idempotent producer sending the same kind of records in sends
 * of 100 (the relay's batch), each awaited — no database. Goal: ratio ≥ 0.7.
 * Framed: the same relay with the event marked `wireFormat: 'confluent'` (ids from the real
 * registry, resolved once and cached) vs the same relay writing plain JSON, in the same run.
 * Poller: the same relay vs a minimal hand-written outbox poller over the same table and producer
 * (one transaction per batch of 100: SELECT … FOR UPDATE SKIP LOCKED, an awaited send, UPDATE to
 * SENT, COMMIT), so the ratio separates evgen's own cost from the cost of having an outbox at
 * all. Goal ≥ 0.9. On PostgreSQL and on MariaDB (a row of its own, both ratios).
 */
import {
  createSchemaIds,
  kafkaRelayPublisher,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
  type Envelope,
  type KafkaProducer,
  type Publisher,
} from '../../src/runtime/index.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { TEST_REGISTRY_URL } from '../support/registry/apicurio.js';
import { registerStockCounted } from './registered-stock-counted.js';
import { SAMPLES, SMOKE, fromSamples, type BenchResult } from './bench-result.js';
import { timed } from './bench-timing.js';
import { relayRate } from './relay-rate.js';
import {
  mariadbPollerBatch,
  postgresPollerBatch,
  type PollerBatch,
} from './hand-written-poller.js';
import { stockCountedEvent } from './stock-counted.js';

const MESSAGES = SMOKE ? 200 : 2_000;
const AGGREGATES = 200;
const WINDOW = 100;

const stockCounted = stockCountedEvent();

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const registered = await registerStockCounted();
  try {
    return await runBench(registered.subject);
  } finally {
    await registered.remove();
  }
}

/** Writes `count` rows in transactions of 100 (not timed: both sides start from the same table). */
async function writeRows(db: Database, schema: string, count: number) {
  for (let start = 0; start < count; start += 100) {
    await db.transaction(async (tx) => {
      for (let i = start; i < Math.min(count, start + 100); i++)
        await writeOutboxEvent(
          tx,
          stockCounted,
          { sku: `SKU-${i % AGGREGATES}`, quantity: i },
          {},
          { schema, notifyChannel: false },
        );
    });
  }
}

/** Events/s of the relay at its defaults, started on `count` written rows until all are published. */
async function relaySample(
  db: Database,
  schema: string,
  count: number,
  publisher: Publisher,
): Promise<number> {
  await writeRows(db, schema, count);
  return relayRate({ db, schema, publisher, count, bench: 'kafka relay bench' });
}

/** Events/s of the hand-written poller on `count` written rows. */
async function pollerSample(
  db: Database,
  schema: string,
  count: number,
  batch: PollerBatch,
): Promise<number> {
  await writeRows(db, schema, count);
  return (
    count /
    (await timed(async () => {
      for (let published = 0; published < count;) {
        const sent = await batch(WINDOW);
        if (sent === 0) throw new Error('kafka relay bench: the poller found no READY row');
        published += sent;
      }
    }))
  );
}

async function runBench(subject: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    const pg = await createTestSchema('evgen_bench_kafka');
    const maria = await createMariadbDatabase('evgen_bench_kafka');
    const kafka = await createTestKafka(create);
    const producer: KafkaProducer = await create({ brokers: [kafka.brokers] }).producer();
    try {
      const pgDb = postgresDatabase(pg.pool);
      const mariaDb = mysqlDatabase(maria.pool);
      await migrateOutbox(pgDb, { schema: pg.schema });
      await migrateOutbox(mariaDb, { schema: maria.schema });
      const [relayTopic, rawTopic] = await kafka.createTopics([
        { topic: 'relay', partitions: 6 },
        { topic: 'raw', partitions: 6 },
      ]);

      const schemaIds = createSchemaIds({
        registry: { url: TEST_REGISTRY_URL },
        subjectNameStrategy: () => subject,
      });
      const plain = kafkaRelayPublisher(
        producer,
        { [stockCounted.eventType]: { topic: 'relay' } },
        { prefix: kafka.prefix },
      );
      const framed = kafkaRelayPublisher(
        producer,
        { [stockCounted.eventType]: { topic: 'relay', wireFormat: 'confluent' } },
        { prefix: kafka.prefix, wireFormat: { schemaIds } },
      );
      const pgPoller = postgresPollerBatch(pg.pool, pg.schema, producer, relayTopic!);
      const mariaPoller = mariadbPollerBatch(maria.pool, producer, relayTopic!);

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

      // Warm-up: connections, query plans, JIT, the registry id.
      const warm = Math.min(MESSAGES, 200);
      await relaySample(pgDb, pg.schema, warm, plain);
      await relaySample(pgDb, pg.schema, warm, framed);
      await relaySample(mariaDb, maria.schema, warm, plain);
      await pollerSample(pgDb, pg.schema, warm, pgPoller);
      await pollerSample(mariaDb, maria.schema, warm, mariaPoller);
      await rawSample(warm);
      const rates = {
        raw: [] as number[],
        relay: [] as number[],
        framed: [] as number[],
        poller: [] as number[],
        mariaRelay: [] as number[],
        mariaPoller: [] as number[],
      };
      // Alternating, so a slower phase of the machine touches every side alike.
      for (let sample = 0; sample < SAMPLES; sample++) {
        rates.raw.push(await rawSample(MESSAGES));
        rates.relay.push(await relaySample(pgDb, pg.schema, MESSAGES, plain));
        rates.poller.push(await pollerSample(pgDb, pg.schema, MESSAGES, pgPoller));
        rates.framed.push(await relaySample(pgDb, pg.schema, MESSAGES, framed));
        rates.mariaRelay.push(await relaySample(mariaDb, maria.schema, MESSAGES, plain));
        rates.mariaPoller.push(await pollerSample(mariaDb, maria.schema, MESSAGES, mariaPoller));
      }
      const note = `${MESSAGES} events per sample, 6 partitions`;
      const rawName = `raw ${name} idempotent producer (acks=all), sends of ${WINDOW} awaited one by one`;
      const pollerName = (database: string) =>
        `minimal hand-written outbox poller on ${database} (SELECT … FOR UPDATE SKIP LOCKED, send, UPDATE SENT), batches of ${WINDOW}`;
      results.push(
        fromSamples(
          {
            name: `relay → Kafka (${name}), defaults (batch ${WINDOW}, maxInFlight ${WINDOW}), ${AGGREGATES} aggregates`,
            unit: 'events/s',
            baselineName: rawName,
            goal: { ratio: 0.7, better: 'higher' },
            note,
          },
          rates.relay,
          rates.raw,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), PostgreSQL, against a hand-written poller`,
            unit: 'events/s',
            baselineName: pollerName('PostgreSQL'),
            goal: { ratio: 0.9, better: 'higher' },
            note,
          },
          rates.relay,
          rates.poller,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), MariaDB, defaults`,
            unit: 'events/s',
            baselineName: rawName,
            goal: { ratio: 0.7, better: 'higher' },
            note,
          },
          rates.mariaRelay,
          rates.raw,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), MariaDB, against a hand-written poller`,
            unit: 'events/s',
            baselineName: pollerName('MariaDB'),
            goal: { ratio: 0.9, better: 'higher' },
            note,
          },
          rates.mariaRelay,
          rates.mariaPoller,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), Confluent wire format (framed, ids cached)`,
            unit: 'events/s',
            baselineName: 'the same relay writing plain JSON',
            goal: { ratio: 0.9, better: 'higher' },
            note: `${note}, ids from the real registry`,
          },
          rates.framed,
          rates.relay,
        ),
      );
    } finally {
      await producer.close();
      await kafka.cleanup();
      await maria.drop();
      await pg.drop();
    }
  }
  return results;
}
