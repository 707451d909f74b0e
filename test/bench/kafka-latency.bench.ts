/**
 * Commit → handler latency on Kafka, end to end with every default, per client adapter: writers
 * commit outbox rows at 500 events/s over 200 aggregates, the polling relay (woken by the
 * commit's NOTIFY) publishes them, and the Kafka consumer runner hands each to an inbox-guarded
 * handler. Measured per event from the writer's commit to the handler's call; p99 against the
 * goal of 100 ms, p50 and max in the note.
 * The knobs that set it (defaults): the relay's wake (NOTIFY, then `minPollIntervalMs`), the
 * relay publisher's coalescing (sends go out as soon as the one before is acknowledged; no
 * linger), and the consumer's fetch wait (the adapter's `maxWaitTime`).
 */
import {
  createKafkaConsumerRunner,
  createOutboxRelay,
  handleWithInbox,
  kafkaRelayPublisher,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  writeOutboxEvent,
  type Envelope,
} from '../../src/runtime/index.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { createTestSchema } from '../support/postgres.js';
import { SMOKE, median, percentile, type BenchResult } from './bench-result.js';
import { stockCountedEvent } from './stock-counted.js';

const BURST = SMOKE ? 100 : 1_000;
const OFFERED_PER_SECOND = 500;
const AGGREGATES = 200;
const WARM_UP = 20;
const GOAL_P99_MS = 100;

const stockCounted = stockCountedEvent();

async function until(what: string, done: () => boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline)
      throw new Error(`kafka latency bench: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    const kafka = await createTestKafka(create);
    const pg = await createTestSchema('evgen_bench_kafka_latency');
    const client = create({ brokers: [kafka.brokers] });
    const producer = await client.producer();
    const { schema } = pg;
    const db = postgresDatabase(pg.pool);
    const commitTimes = new Map<string, number>();
    const handledTimes = new Map<string, number>();
    const publishedTimes = new Map<string, number>();
    try {
      await migrateOutbox(db, { schema });
      await migrateInbox(db, { schema });
      const [topic, retry, deadLetter] = await kafka.createTopics([
        { topic: 'latency', partitions: 6 },
        { topic: 'latency-consumer.retry.1s', partitions: 6 },
        { topic: 'latency-consumer.dlt', partitions: 1 },
      ]);
      const runner = createKafkaConsumerRunner({
        kafka: {
          client,
          routes: {
            consumer: 'latency-consumer',
            groupId: kafka.group('latency-runner'),
            topics: [topic!],
            retry: [{ topic: retry!, delayMs: 1_000 }],
            deadLetter: deadLetter!,
          },
        },
        handler: {
          name: 'latency-consumer',
          handle: (raw) => {
            const envelope = raw as Envelope;
            handledTimes.set(envelope.messageId, performance.now());
            return handleWithInbox(
              db,
              { schema, consumer: 'latency-consumer', envelope },
              async () => undefined,
            );
          },
        },
      });
      const relay = createOutboxRelay({
        db,
        schema,
        publisher: kafkaRelayPublisher(
          producer,
          { [stockCounted.eventType]: { topic: 'latency' } },
          { prefix: kafka.prefix },
        ),
        hooks: {
          onPublished: (message) =>
            publishedTimes.set(message.envelope.messageId, performance.now()),
        },
      });
      const write = (i: number) =>
        db
          .transaction((tx) =>
            writeOutboxEvent(
              tx,
              stockCounted,
              { sku: `SKU-${i % AGGREGATES}`, quantity: i },
              {},
              { schema },
            ),
          )
          .then((envelope) => {
            commitTimes.set(envelope.messageId, performance.now());
          });
      await runner.start();
      await relay.start();
      try {
        // Untimed: partitions assigned, connections and JIT warm.
        await Promise.all(Array.from({ length: WARM_UP }, (_, i) => write(i)));
        await until('the warm-up events handled', () => handledTimes.size >= WARM_UP);
        commitTimes.clear();
        handledTimes.clear();
        publishedTimes.clear();
        const started = performance.now();
        const writers: Promise<void>[] = [];
        for (let i = 0; i < BURST; i++) {
          const wait = started + (i * 1_000) / OFFERED_PER_SECOND - performance.now();
          if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
          writers.push(write(i));
        }
        await Promise.all(writers);
        await until('every burst event handled', () =>
          [...commitTimes.keys()].every((id) => handledTimes.has(id)),
        );
      } finally {
        await relay.stop();
        await runner.stop();
      }
      const latencies = [...commitTimes].map(([id, at]) => handledTimes.get(id)! - at);
      // Where the time goes: commit → the broker's acknowledgement (relay), then → the handler.
      const toAck = [...commitTimes].map(([id, at]) => publishedTimes.get(id)! - at);
      results.push({
        name: `Kafka (${name}) end to end, ${BURST} events at ${OFFERED_PER_SECOND}/s offered, polling relay woken by NOTIFY, defaults: commit → handler p99`,
        unit: 'ms',
        subject: percentile(latencies, 99),
        baselineName: `the goal, p99 ≤ ${GOAL_P99_MS} ms`,
        baseline: GOAL_P99_MS,
        goal: { ratio: 1, better: 'lower' },
        note: `p50 ${median(latencies).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms; commit → acknowledged p50 ${median(toAck).toFixed(0)} ms, p99 ${percentile(toAck, 99).toFixed(0)} ms; one sample`,
      });
    } finally {
      await producer.close();
      await kafka.cleanup();
      await pg.drop();
    }
  }
  return results;
}
