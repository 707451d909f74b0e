/**
 * RabbitMQ transport against raw amqplib doing the same work in the same run (real PostgreSQL,
 * real RabbitMQ), medians of ≥ 3 alternating samples with their spread:
 * - relay: the outbox relay with its DEFAULT batch (100) and in-flight window (100) — claim,
 *   confirmed + routed publish, mark SENT — vs a raw confirm channel publishing the same
 *   envelopes in windows of the same size, waiting for each window's confirms (no database);
 *   directly, and through the TCP fault proxy with +200 ms each way (both sides proxied); and,
 *   without added latency, against a minimal hand-written outbox poller (one transaction per
 *   batch: SELECT … FOR UPDATE SKIP LOCKED, publish, confirms, UPDATE SENT) on the same table;
 * - consumer: the consumer runner at its DEFAULT prefetch with an inbox consumer
 *   (`createInboxConsumer`: parse, validate, dispatch, inbox guard, one business INSERT) vs a raw
 *   amqplib consumer with the same prefetch doing the same SQL (BEGIN, inbox INSERT … ON
 *   CONFLICT, INSERT, UPDATE processed_at, COMMIT, ack); plus the runner at prefetch 1–100, which
 *   is how DEFAULT_PREFETCH was chosen;
 * - metrics: the same consumer runner with the Prometheus exporter on (`createPrometheusMetrics`:
 *   handler timed per event type, runner events counted, `/metrics` text rendered every 100 ms
 *   during the run, 150x the usual 15 s scrape rate) vs off, alternating in the same run;
 * - end to end: a burst of 1 000 events offered at 500 events/s (writer transactions → NOTIFY →
 *   relay → broker → runner → inbox handler), all defaults; latency from the commit to the
 *   handler's transaction, p50 and p99.
 */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import {
  ConfirmedPublisher,
  createPrometheusMetrics,
  createRabbitMqConsumerRunner,
  createInboxConsumer,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Database,
  type Envelope,
  type RabbitTopology,
  type Transaction,
} from '../../src/runtime/index.js';
import { envelopeToAmqpMessage } from '../../src/runtime/rabbitmq/amqp-message.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestBroker, waitFor } from '../support/rabbitmq.js';
import { SAMPLES, SMOKE, fromSamples, median, type BenchResult } from './bench-result.js';
import { timed } from './bench-timing.js';
import { relayRate } from './relay-rate.js';
import { stockCountedEvent, type StockCounted } from './stock-counted.js';

const RELAY_EVENTS = SMOKE ? 200 : 2_000;
const LATENCY_EVENTS = SMOKE ? 200 : 1_000;
const CONSUMER_MESSAGES = SMOKE ? 200 : 2_000;
const PREFETCH_SERIES_MESSAGES = SMOKE ? 100 : 1_000;
const AGGREGATES = 200;
/** The relay's defaults (relay-options.ts), so the baseline uses the same window. */
const RELAY_DEFAULT_WINDOW = 100;
/** The consumer runner's default prefetch (consumer-runner.ts). */
const RUNNER_DEFAULT_PREFETCH = 20;
const BURST = SMOKE ? 100 : 1_000;
const OFFERED_PER_SECOND = 500;
/**
 * Which parts run (EVGEN_BENCH_RABBITMQ=consumer for the consumer rows alone): relay, consumer,
 * prefetch, e2e. Default all.
 */
const PARTS = new Set(
  (process.env.EVGEN_BENCH_RABBITMQ ?? 'relay,consumer,prefetch,metrics,e2e').split(','),
);

const stockCounted = stockCountedEvent();
const routes = { 'bench.StockCounted': { exchange: 'bench', routingKey: 'stock.counted' } };
const topology: RabbitTopology = {
  exchanges: ['bench'],
  consumers: [
    {
      name: 'bench-consumer',
      subscriptions: [
        { eventType: 'bench.StockCounted', exchange: 'bench', routingKey: 'stock.counted' },
      ],
    },
  ],
};

function progress(text: string): void {
  if (process.env.EVGEN_BENCH_VERBOSE === '1') console.error(`  ${text}`);
}

export async function run(): Promise<BenchResult[]> {
  const pg = await createTestSchema('evgen_bench_rabbit');
  const broker = await createTestBroker();
  const schema = pg.schema;
  const db: Database = postgresDatabase(pg.pool);
  const results: BenchResult[] = [];
  let counter = 0;
  try {
    await migrateOutbox(db, { schema });
    await migrateInbox(db, { schema });
    await db.query(
      `CREATE TABLE "${schema}".stock_count (sku text NOT NULL, quantity int NOT NULL, message_id text NOT NULL)`,
    );
    const resolved = await broker.declare(topology, { tiers: [1_000] });
    const consumerRoutes = resolved.consumers['bench-consumer']!;
    const queue = consumerRoutes.queue;
    const exchange = `${broker.prefix}bench`;
    const purge = () => broker.channel.purgeQueue(queue);

    /** Writes `count` events into the outbox (untimed) and returns their envelopes. */
    const writeEvents = async (count: number): Promise<Envelope[]> => {
      const envelopes: Envelope[] = [];
      for (let start = 0; start < count; start += 100) {
        await db.transaction(async (tx) => {
          for (let i = start; i < Math.min(count, start + 100); i++) {
            envelopes.push(
              await writeOutboxEvent(
                tx,
                stockCounted,
                { sku: `SKU-${i % AGGREGATES}`, quantity: counter++ },
                {},
                { schema, notifyChannel: false },
              ),
            );
          }
        });
      }
      return envelopes;
    };

    /**
     * Events per second of the relay (defaults) publishing `count` fresh outbox rows through
     * `publisher` (opened by the warm-up, as the raw side's channel is opened before its timing).
     */
    const relaySample = async (publisher: ConfirmedPublisher, count: number): Promise<number> => {
      await writeEvents(count);
      try {
        return await relayRate({
          db,
          schema,
          publisher: rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix }),
          count,
          bench: 'relay bench',
        });
      } finally {
        await purge();
      }
    };

    /** Raw confirm channel: the same kind of envelopes, windows of `window`, each window's confirms awaited. */
    const rawSample = async (
      connection: ChannelModel,
      count: number,
      window: number,
    ): Promise<number> => {
      const envelopes = Array.from({ length: count }, (_, i) => ({
        messageId: crypto.randomUUID(),
        eventType: 'bench.StockCounted',
        schemaVersion: 1,
        aggregateType: 'Stock',
        aggregateId: `SKU-${i % AGGREGATES}`,
        occurredAt: new Date().toISOString(),
        payload: { sku: `SKU-${i % AGGREGATES}`, quantity: i },
      }));
      const channel: ConfirmChannel = await connection.createConfirmChannel();
      try {
        return (
          count /
          (await timed(async () => {
            for (let i = 0; i < count; i += window) {
              for (const envelope of envelopes.slice(i, i + window)) {
                const message = envelopeToAmqpMessage(envelope);
                channel.publish(exchange, 'stock.counted', message.content, {
                  ...message.properties,
                  mandatory: true,
                });
              }
              await channel.waitForConfirms();
            }
          }))
        );
      } finally {
        await channel.close();
        await purge();
      }
    };

    /**
     * A minimal hand-written outbox poller over the same table, batch and confirm window: per
     * batch one transaction — SELECT the oldest READY rows … FOR UPDATE SKIP LOCKED, publish them
     * on a confirm channel, wait for the confirms, UPDATE them to SENT, COMMIT. No per-aggregate
     * order check, lease, retry or poison bookkeeping: the least database work an outbox relay
     * does, so the relay can be compared with what any outbox costs, not only with no database.
     */
    const pollerSample = async (
      connection: ChannelModel,
      count: number,
      batch: number,
    ): Promise<number> => {
      await writeEvents(count);
      const channel: ConfirmChannel = await connection.createConfirmChannel();
      const client = await pg.pool.connect();
      try {
        return (
          count /
          (await timed(async () => {
            for (let published = 0; published < count;) {
              await client.query('BEGIN');
              const { rows } = await client.query<{
                id: string;
                event_id: string;
                event_type: string;
                schema_version: number;
                aggregate_type: string;
                aggregate_id: string;
                occurred_at: Date;
                payload: unknown;
              }>(
                `SELECT id::text AS id, event_id::text AS event_id, event_type, schema_version, aggregate_type, aggregate_id, occurred_at, payload
                 FROM "${schema}".outbox_event WHERE status = 'READY' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
                [batch],
              );
              for (const row of rows) {
                const message = envelopeToAmqpMessage({
                  messageId: row.event_id,
                  eventType: row.event_type,
                  schemaVersion: row.schema_version,
                  aggregateType: row.aggregate_type,
                  aggregateId: row.aggregate_id,
                  occurredAt: row.occurred_at.toISOString(),
                  payload: row.payload,
                });
                channel.publish(exchange, 'stock.counted', message.content, {
                  ...message.properties,
                  mandatory: true,
                });
              }
              await channel.waitForConfirms();
              await client.query(
                `UPDATE "${schema}".outbox_event SET status = 'SENT', sent_at = now() WHERE id = ANY($1::bigint[])`,
                [rows.map((row) => row.id)],
              );
              await client.query('COMMIT');
              published += rows.length;
            }
          }))
        );
      } finally {
        client.release();
        await channel.close();
        await purge();
      }
    };

    for (const latencyMs of PARTS.has('relay') ? [0, 200] : []) {
      const proxy = latencyMs > 0 ? await startFaultProxy({ targetPort: 5672 }) : undefined;
      proxy?.latency(latencyMs);
      const connection = await amqp.connect(`amqp://guest:guest@127.0.0.1:${proxy?.port ?? 5672}`);
      const count = latencyMs > 0 ? LATENCY_EVENTS : RELAY_EVENTS;
      const publisher = new ConfirmedPublisher(connection);
      try {
        // Warm-up: the publisher's channel, query plans, JIT.
        await relaySample(publisher, Math.min(count, 200));
        await rawSample(connection, Math.min(count, 200), RELAY_DEFAULT_WINDOW);
        // The poller reference only without added latency (there it shows the database's share).
        const withPoller = latencyMs === 0;
        if (withPoller) await pollerSample(connection, Math.min(count, 200), RELAY_DEFAULT_WINDOW);
        const relay: number[] = [];
        const raw: number[] = [];
        const poller: number[] = [];
        for (let sample = 0; sample < SAMPLES; sample++) {
          raw.push(await rawSample(connection, count, RELAY_DEFAULT_WINDOW));
          if (withPoller) poller.push(await pollerSample(connection, count, RELAY_DEFAULT_WINDOW));
          relay.push(await relaySample(publisher, count));
          progress(
            `relay +${latencyMs} ms sample ${sample}: ${relay.at(-1)!.toFixed(0)} vs raw ${raw.at(-1)!.toFixed(0)}${withPoller ? `, poller ${poller.at(-1)!.toFixed(0)}` : ''}`,
          );
        }
        const label = latencyMs > 0 ? `, +${latencyMs} ms broker latency each way` : '';
        results.push(
          fromSamples(
            {
              name: `relay → RabbitMQ, defaults (batch ${RELAY_DEFAULT_WINDOW}, maxInFlight ${RELAY_DEFAULT_WINDOW}), ${AGGREGATES} aggregates${label}`,
              unit: 'events/s',
              baselineName: `raw confirm channel, windows of ${RELAY_DEFAULT_WINDOW} + waitForConfirms${label}`,
              goal: { ratio: latencyMs > 0 ? 1 : 0.7, better: 'higher' },
              note: `${count} events per sample`,
            },
            relay,
            raw,
          ),
        );
        if (withPoller) {
          results.push(
            fromSamples(
              {
                name: `relay → RabbitMQ, defaults, ${AGGREGATES} aggregates`,
                unit: 'events/s',
                baselineName: `minimal hand-written outbox poller (SELECT … FOR UPDATE SKIP LOCKED, publish, confirms, UPDATE SENT), batches of ${RELAY_DEFAULT_WINDOW}`,
                note: 'the relay against the least database work an outbox does',
              },
              relay,
              poller,
            ),
            fromSamples(
              {
                name: `minimal hand-written outbox poller, batches of ${RELAY_DEFAULT_WINDOW}`,
                unit: 'events/s',
                baselineName: `raw confirm channel, windows of ${RELAY_DEFAULT_WINDOW} + waitForConfirms`,
                note: 'what the database round trips alone cost a publisher',
              },
              poller,
              raw,
            ),
          );
        }
      } finally {
        await publisher.close();
        await connection.close().catch(() => undefined);
        await proxy?.close();
      }
    }

    // Consumer: fill the queue with the same messages for both sides, then drain it.
    const fill = async (count: number) => {
      await rawSample(broker.connection, 0, 1); // purge
      const channel = await broker.connection.createConfirmChannel();
      for (let i = 0; i < count; i++) {
        const message = envelopeToAmqpMessage({
          messageId: crypto.randomUUID(),
          eventType: 'bench.StockCounted',
          schemaVersion: 1,
          aggregateType: 'Stock',
          aggregateId: `SKU-${i % AGGREGATES}`,
          occurredAt: new Date().toISOString(),
          payload: { sku: `SKU-${i % AGGREGATES}`, quantity: i },
        });
        if (!channel.publish(exchange, 'stock.counted', message.content, message.properties))
          await new Promise((resolve) => channel.once('drain', resolve));
      }
      await channel.waitForConfirms();
      await channel.close();
      await db.query(`TRUNCATE "${schema}".stock_count, "${schema}".inbox_message`);
    };
    const inboxConsumer = createInboxConsumer(
      { name: 'bench-consumer', descriptors: [stockCounted] },
      {
        db,
        inbox: { schema },
        handlers: {
          'bench.StockCounted': {
            1: async (
              envelope: Envelope<string, number, StockCounted>,
              ctx: { tx: Transaction },
            ) => {
              await ctx.tx.query(
                `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
                [envelope.payload.sku, envelope.payload.quantity, envelope.messageId],
              );
            },
          },
        },
      },
    );
    const runnerSample = async (
      count: number,
      prefetch: number,
      exporter = false,
    ): Promise<number> => {
      await fill(count);
      const metrics = exporter ? createPrometheusMetrics() : undefined;
      const runner = createRabbitMqConsumerRunner({
        handler: metrics?.instrumentHandler(inboxConsumer) ?? inboxConsumer,
        ...(metrics !== undefined ? { onEvent: metrics.consumerEvents(inboxConsumer.name) } : {}),
        rabbitmq: {
          connection: broker.connection,
          routes: consumerRoutes,
          prefetch,
        },
      });
      metrics?.watchConsumer(inboxConsumer.name, runner);
      let scrapes = 0;
      const scraper =
        metrics === undefined
          ? undefined
          : setInterval(() => {
              void metrics.text().then(() => scrapes++);
            }, 100);
      const seconds = await timed(async () => {
        await runner.start();
        await waitFor(
          'the runner to drain the queue',
          () => (runner.metrics().handled >= count ? true : undefined),
          300_000,
        );
      });
      clearInterval(scraper);
      await runner.stop();
      if (metrics !== undefined && scrapes === 0 && seconds > 0.2)
        throw new Error('the exporter was never scraped during the run');
      return count / seconds;
    };
    /** `plain`: one INSERT and the ack, no inbox (the issue's second baseline). */
    const rawConsumerSample = async (
      count: number,
      prefetch: number,
      plain = false,
    ): Promise<number> => {
      await fill(count);
      const channel = await broker.connection.createChannel();
      await channel.prefetch(prefetch);
      let handled = 0;
      const seconds = await timed(async () => {
        await channel.consume(queue, (message) => {
          if (message === null) return;
          void (async () => {
            const envelope = JSON.parse(message.content.toString()) as Envelope<
              string,
              number,
              StockCounted
            >;
            if (plain) {
              await pg.pool.query(
                `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
                [envelope.payload.sku, envelope.payload.quantity, envelope.messageId],
              );
              channel.ack(message);
              handled++;
              return;
            }
            const client = await pg.pool.connect();
            try {
              await client.query('BEGIN');
              const claimed = await client.query(
                `INSERT INTO "${schema}".inbox_message (message_id, consumer) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
                [envelope.messageId, 'bench-consumer'],
              );
              if (claimed.rows.length === 1) {
                await client.query(
                  `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
                  [envelope.payload.sku, envelope.payload.quantity, envelope.messageId],
                );
                await client.query(
                  `UPDATE "${schema}".inbox_message SET processed_at = now() WHERE message_id = $1 AND consumer = $2`,
                  [envelope.messageId, 'bench-consumer'],
                );
              }
              await client.query('COMMIT');
            } finally {
              client.release();
            }
            channel.ack(message);
            handled++;
          })();
        });
        await waitFor(
          'the raw consumer to drain the queue',
          () => (handled >= count ? true : undefined),
          300_000,
        );
      });
      await channel.close();
      return count / seconds;
    };

    if (PARTS.has('consumer')) {
      await runnerSample(Math.min(CONSUMER_MESSAGES, 200), RUNNER_DEFAULT_PREFETCH);
      await rawConsumerSample(Math.min(CONSUMER_MESSAGES, 200), RUNNER_DEFAULT_PREFETCH);
      const runnerRates: number[] = [];
      const rawRates: number[] = [];
      const plainRates: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        plainRates.push(await rawConsumerSample(CONSUMER_MESSAGES, RUNNER_DEFAULT_PREFETCH, true));
        rawRates.push(await rawConsumerSample(CONSUMER_MESSAGES, RUNNER_DEFAULT_PREFETCH));
        runnerRates.push(await runnerSample(CONSUMER_MESSAGES, RUNNER_DEFAULT_PREFETCH));
        progress(
          `consumer sample ${sample}: ${runnerRates.at(-1)!.toFixed(0)} vs raw ${rawRates.at(-1)!.toFixed(0)}`,
        );
      }
      results.push(
        fromSamples(
          {
            name: `consumer runner + inbox consumer, default prefetch ${RUNNER_DEFAULT_PREFETCH}`,
            unit: 'msg/s',
            baselineName: 'raw amqplib consumer, same SQL, same prefetch',
            goal: { ratio: 0.9, better: 'higher' },
            note: `${CONSUMER_MESSAGES} messages over ${AGGREGATES} aggregates; pg pool of 10`,
          },
          runnerRates,
          rawRates,
        ),
      );
      results.push(
        fromSamples(
          {
            name: `consumer runner + inbox consumer, default prefetch ${RUNNER_DEFAULT_PREFETCH}`,
            unit: 'msg/s',
            baselineName: 'raw amqplib consumer, one plain INSERT + ack (no inbox), same prefetch',
            note: 'what the inbox transaction costs on top of the cheapest possible handler',
          },
          runnerRates,
          plainRates,
        ),
      );
    }

    // The Prometheus exporter's cost: the same runner with metrics on vs off, alternating.
    if (PARTS.has('metrics')) {
      const onRates: number[] = [];
      const offRates: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        offRates.push(await runnerSample(CONSUMER_MESSAGES, RUNNER_DEFAULT_PREFETCH));
        onRates.push(await runnerSample(CONSUMER_MESSAGES, RUNNER_DEFAULT_PREFETCH, true));
        progress(
          `metrics sample ${sample}: on ${onRates.at(-1)!.toFixed(0)} vs off ${offRates.at(-1)!.toFixed(0)}`,
        );
      }
      results.push(
        fromSamples(
          {
            name: 'consumer runner + inbox consumer, Prometheus exporter on (scraped every 100 ms)',
            unit: 'msg/s',
            baselineName: 'the same runner, exporter off',
            goal: { ratio: 0.95, better: 'higher' },
            note: `${CONSUMER_MESSAGES} messages; createPrometheusMetrics with instrumentHandler, consumerEvents, watchConsumer`,
          },
          onRates,
          offRates,
        ),
      );
    }

    // Prefetch series, to choose the default: the runner against itself at prefetch 20.
    if (PARTS.has('prefetch')) {
      const prefetches = SMOKE ? [1, 20] : [1, 10, 20, 50, 100];
      const byPrefetch = new Map<number, number[]>();
      for (let sample = 0; sample < SAMPLES; sample++) {
        for (const prefetch of prefetches) {
          const rate = await runnerSample(PREFETCH_SERIES_MESSAGES, prefetch);
          byPrefetch.set(prefetch, [...(byPrefetch.get(prefetch) ?? []), rate]);
        }
      }
      for (const prefetch of prefetches) {
        if (prefetch === RUNNER_DEFAULT_PREFETCH) continue;
        results.push(
          fromSamples(
            {
              name: `consumer runner + inbox consumer, prefetch ${prefetch}`,
              unit: 'msg/s',
              baselineName: `the same at the default prefetch ${RUNNER_DEFAULT_PREFETCH}`,
              note: 'how the default prefetch was chosen',
            },
            byPrefetch.get(prefetch)!,
            byPrefetch.get(RUNNER_DEFAULT_PREFETCH)!,
          ),
        );
      }
    }

    // End to end, all defaults: writers offer BURST events at OFFERED_PER_SECOND.
    if (PARTS.has('e2e')) {
      await fill(0);
      const commitTimes = new Map<string, number>();
      const handledTimes = new Map<string, number>();
      const e2eRunner = createRabbitMqConsumerRunner({
        handler: {
          name: inboxConsumer.name,
          handle: async (raw) => {
            const result = await inboxConsumer.handle(raw);
            const id = (raw as { messageId?: string }).messageId;
            if (id !== undefined) handledTimes.set(id, performance.now());
            return result;
          },
        },
        rabbitmq: {
          connection: broker.connection,
          routes: consumerRoutes,
        },
      });
      const publisher = new ConfirmedPublisher(broker.connection);
      const relay = createOutboxRelay({
        db,
        schema,
        publisher: rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix }),
      });
      await e2eRunner.start();
      await relay.start();
      try {
        const started = performance.now();
        const writers: Promise<void>[] = [];
        for (let i = 0; i < BURST; i++) {
          const due = started + (i * 1_000) / OFFERED_PER_SECOND;
          const wait = due - performance.now();
          if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
          writers.push(
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
              }),
          );
        }
        await Promise.all(writers);
        await waitFor(
          'every burst event to be handled',
          () => (handledTimes.size >= BURST ? true : undefined),
          300_000,
        );
      } finally {
        await relay.stop();
        await e2eRunner.stop();
        await publisher.close();
      }
      const sorted = [...commitTimes]
        .map(([id, at]) => handledTimes.get(id)! - at)
        .sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
      results.push({
        name: `end to end, ${BURST}-event burst at ${OFFERED_PER_SECOND}/s offered, defaults: commit → handler p99`,
        unit: 'ms',
        subject: p99,
        baselineName: 'the goal, p99 ≤ 1 s',
        baseline: 1_000,
        goal: { ratio: 1, better: 'lower' },
        note: `p50 ${median(sorted).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; one sample`,
      });
    }
  } finally {
    await broker.cleanup();
    await pg.drop();
  }
  return results;
}
