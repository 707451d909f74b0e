/**
 * Pulsar transport against the same client's raw producer and consumer doing the same work, in
 * the same run (real PostgreSQL, the shared test broker, the WebSocket client route; a namespace
 * of the bench's own, 4-partition topics), medians of ≥ 3 samples with their spread:
 * - relay: the outbox relay at its defaults (batch 100, maxInFlight 100) running its loop —
 *   claim, a send acknowledged by the broker, mark SENT — through `pulsarRelayPublisher`, vs the
 *   same client's producer sending the same kind of messages (key, properties, envelope JSON) in
 *   windows of 100 whose acknowledgements are awaited together; no database;
 * - consumer: `createPulsarConsumerRunner` with an inbox consumer (`createInboxConsumer`: parse,
 *   validate, dispatch, inbox guard, one business INSERT), acknowledging after the commit, vs the
 *   same client's raw consumer (Key_Shared, the same 100 messages unsettled at most) doing the
 *   same SQL (BEGIN, inbox INSERT … ON CONFLICT, INSERT, UPDATE processed_at, COMMIT) and then
 *   the ack, messages of one key one after the other as the runner does (a promise chain per
 *   key). Each sample reads the same messages on a new subscription from the earliest position;
 *   both sides first handle a few messages untimed (JIT, connections), and the order rotates
 *   from sample to sample.
 */
import {
  createEnvelope,
  createInboxConsumer,
  createPulsarConsumerRunner,
  createPulsarProducers,
  ensurePulsarTopics,
  envelopeToPulsarMessage,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarRelayPublisher,
  pulsarWebSocketClient,
  writeOutboxEvent,
  type ConsumerContext,
  type Envelope,
  type PulsarInboundMessage,
  type PulsarRoute,
} from '../../src/runtime/index.js';
import { createTestSchema } from '../support/postgres.js';
import {
  ensureSharedPulsarBroker,
  releasePulsarLease,
  sharedPulsarDataDir,
  takePulsarLease,
} from '../support/pulsar/broker.js';
import { createTestPulsar, type TestPulsar } from '../support/pulsar/test-pulsar.js';
import { SAMPLES, SMOKE, fromSamples, type BenchResult } from './bench-result.js';
import { timed, until } from './bench-timing.js';
import { rawInboxHandle } from './raw-inbox.js';
import { relayRate } from './relay-rate.js';
import { runnerRate } from './runner-rate.js';
import { stockCountedEvent, type StockCounted } from './stock-counted.js';

const MESSAGES = SMOKE ? 200 : 2_000;
/** Messages each side handles, untimed, before the samples. */
const WARM_UP = 200;
const AGGREGATES = 200;
const PARTITIONS = 4;
const WINDOW = 100;
const CONSUMER = 'bench-consumer';

const stockCounted = stockCountedEvent();

export async function run(): Promise<BenchResult[]> {
  // Like the vitest global setup: a lease on the shared broker, which the last holder stops.
  const dataDir = sharedPulsarDataDir();
  takePulsarLease(dataDir);
  try {
    await ensureSharedPulsarBroker();
    const pulsar = await createTestPulsar();
    try {
      const namespace = await pulsar.namespace('bench');
      return [await relayBench(pulsar, namespace), await consumerBench(pulsar, namespace)];
    } finally {
      await pulsar.cleanup();
    }
  } finally {
    await releasePulsarLease(dataDir);
  }
}

async function relayBench(pulsar: TestPulsar, namespace: string): Promise<BenchResult> {
  const [tenant, local] = namespace.split('/') as [string, string];
  const route: PulsarRoute = { tenant, namespace: local, topic: 'relay', partitions: PARTITIONS };
  const relayTopic = `persistent://${namespace}/relay`;
  const rawTopic = `persistent://${namespace}/raw`;
  await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [
    { topic: relayTopic, partitions: PARTITIONS },
    { topic: rawTopic, partitions: PARTITIONS },
  ]);
  const pg = await createTestSchema('evgen_bench_pulsar');
  const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
  const producers = createPulsarProducers(client);
  const raw = await client.producer(rawTopic);
  try {
    const { schema } = pg;
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema });
    await producers.producerFor(relayTopic);
    let counter = 0;

    const relaySample = async (count: number): Promise<number> => {
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
      return relayRate({
        db,
        schema,
        publisher: pulsarRelayPublisher(producers, { [stockCounted.eventType]: route }),
        count,
        bench: 'pulsar relay bench',
      });
    };

    const rawSample = async (count: number): Promise<number> => {
      const messages = Array.from({ length: count }, (_, i) =>
        envelopeToPulsarMessage(
          createEnvelope(stockCounted, { sku: `SKU-${i % AGGREGATES}`, quantity: i }),
        ),
      );
      return (
        count /
        (await timed(async () => {
          for (let i = 0; i < count; i += WINDOW)
            await Promise.all(messages.slice(i, i + WINDOW).map((message) => raw.send(message)));
        }))
      );
    };

    await relaySample(Math.min(MESSAGES, 200));
    await rawSample(Math.min(MESSAGES, 200));
    const relayRates: number[] = [];
    const rawRates: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      if (sample % 2 === 0) {
        rawRates.push(await rawSample(MESSAGES));
        relayRates.push(await relaySample(MESSAGES));
      } else {
        relayRates.push(await relaySample(MESSAGES));
        rawRates.push(await rawSample(MESSAGES));
      }
      console.error(
        `  pulsar relay sample ${sample}: relay ${relayRates.at(-1)!.toFixed(0)} vs raw ${rawRates.at(-1)!.toFixed(0)} events/s`,
      );
    }
    return fromSamples(
      {
        name: `relay → Pulsar (WebSocket client), defaults (batch ${WINDOW}, maxInFlight ${WINDOW}), ${AGGREGATES} aggregates`,
        unit: 'events/s',
        baselineName: `the same client's raw producer, windows of ${WINDOW} sends awaited together`,
        goal: { ratio: 0.7, better: 'higher' },
        note: `${MESSAGES} events per sample, ${PARTITIONS} partitions; order alternating`,
      },
      relayRates,
      rawRates,
    );
  } finally {
    await raw.close();
    await producers.close();
    await pg.drop();
  }
}

async function consumerBench(pulsar: TestPulsar, namespace: string): Promise<BenchResult> {
  const topic = `persistent://${namespace}/bench.events`;
  await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [{ topic, partitions: PARTITIONS }]);
  const pg = await createTestSchema('evgen_bench_pulsar');
  const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
  const { schema } = pg;
  const db = postgresDatabase(pg.pool);
  try {
    await migrateInbox(db, { schema });
    await pg.pool.query(
      `CREATE TABLE "${schema}".stock_count (sku text NOT NULL, quantity int NOT NULL, message_id text NOT NULL)`,
    );
    const producer = await client.producer(topic);
    try {
      for (let start = 0; start < MESSAGES; start += WINDOW) {
        await Promise.all(
          Array.from({ length: Math.min(WINDOW, MESSAGES - start) }, (_, i) =>
            producer.send(
              envelopeToPulsarMessage(
                createEnvelope(stockCounted, {
                  sku: `SKU-${(start + i) % AGGREGATES}`,
                  quantity: start + i,
                }),
              ),
            ),
          ),
        );
      }
    } finally {
      await producer.close();
    }
    const insert = `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`;
    const consumer = createInboxConsumer(
      { name: CONSUMER, descriptors: [stockCounted] },
      {
        db,
        inbox: { schema },
        handlers: {
          [stockCounted.eventType]: {
            1: async (envelope: Envelope<string, 1, StockCounted>, ctx: ConsumerContext) => {
              await ctx.tx.query(insert, [
                envelope.payload.sku,
                envelope.payload.quantity,
                envelope.messageId,
              ]);
            },
          },
        },
      },
    );
    const routes = pulsarConsumerTopics(CONSUMER, [topic], { retryTiersMs: [1_000] });
    let subscription = 0;
    const reset = () =>
      pg.pool.query(`TRUNCATE "${schema}".stock_count, "${schema}".inbox_message`);

    // Subject: the runner with the inbox consumer; msg/s over the first `count` messages.
    const runnerSample = async (count: number): Promise<number> => {
      await reset();
      const runner = createPulsarConsumerRunner({
        client,
        routes: { ...routes, subscription: `bench-runner-${subscription++}` },
        handler: consumer,
      });
      return runnerRate(runner, count);
    };

    // Baseline: the same client's consumer doing the same SQL, then the ack; one key at a time.
    const rawSample = async (count: number): Promise<number> => {
      await reset();
      const raw = client.consumer({
        topics: [topic],
        subscription: `bench-raw-${subscription++}`,
        subscriptionType: 'Key_Shared',
      });
      const chains = new Map<string, Promise<void>>();
      const inFlight = new Set<Promise<void>>();
      let handled = 0;
      let closing = false;
      let failure: unknown;
      const handle = async (message: PulsarInboundMessage) => {
        // Past the count: left unacknowledged (the subscription is this sample's alone).
        if (closing) return;
        const envelope = JSON.parse(message.payload.toString('utf8')) as Envelope<
          string,
          1,
          StockCounted
        >;
        await rawInboxHandle(pg.pool, schema, CONSUMER, envelope);
        raw.ack(message);
        handled++;
      };
      try {
        return (
          count /
          (await timed(async () => {
            await raw.start({
              onMessage(message) {
                const key = message.key ?? '';
                const next = (chains.get(key) ?? Promise.resolve())
                  .then(() => handle(message))
                  .catch((error: unknown) => {
                    failure ??= error;
                  });
                chains.set(key, next);
                inFlight.add(next);
                void next.finally(() => {
                  inFlight.delete(next);
                  if (chains.get(key) === next) chains.delete(key);
                });
              },
            });
            await until('the raw consumer to handle every message', () => {
              if (failure !== undefined)
                throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
              return handled >= count;
            });
          }))
        );
      } finally {
        // Like the runner's stop: no new work, the transactions in flight finish, then close
        // (the next sample's TRUNCATE must not meet an open one).
        closing = true;
        await Promise.allSettled([...inFlight]);
        await raw.close();
      }
    };

    await runnerSample(WARM_UP);
    await rawSample(WARM_UP);
    const runnerRates: number[] = [];
    const rawRates: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      if (sample % 2 === 0) {
        rawRates.push(await rawSample(MESSAGES));
        runnerRates.push(await runnerSample(MESSAGES));
      } else {
        runnerRates.push(await runnerSample(MESSAGES));
        rawRates.push(await rawSample(MESSAGES));
      }
      console.error(
        `  pulsar consumer sample ${sample}: runner ${runnerRates.at(-1)!.toFixed(0)} vs raw ${rawRates.at(-1)!.toFixed(0)} msg/s`,
      );
    }
    return fromSamples(
      {
        name: 'Pulsar consumer runner + inbox consumer (WebSocket client, Key_Shared)',
        unit: 'msg/s',
        baselineName:
          "the same client's raw consumer doing the same SQL, ack after commit, one key at a time",
        goal: { ratio: 0.9, better: 'higher' },
        note: `${MESSAGES} messages per sample, ${PARTITIONS} partitions, ${AGGREGATES} keys, 100 unsettled at most, pg pool of 10; includes subscribing; warm-up ${WARM_UP}, order alternating`,
      },
      runnerRates,
      rawRates,
    );
  } finally {
    await pg.drop();
  }
}
