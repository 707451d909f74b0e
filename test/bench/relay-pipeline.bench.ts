/**
 * Relay throughput with pipelined confirms, against raw confirmed publishing measured in the same
 * run (real PostgreSQL, real RabbitMQ), directly and with +200 ms of broker latency (TCP fault
 * proxy): the relay (claim, publish with per-aggregate order, confirm, mark SENT) vs a raw
 * amqplib confirm channel publishing the same messages in batches of the same size and waiting
 * for each batch's confirms. Also the consumer runner at several prefetch values (per-aggregate
 * lanes on), to choose its default.
 */
import { postgresDatabase, type Database } from '../../src/runtime/db/database.js';
import { migrateInbox } from '../../src/runtime/inbox/index.js';
import {
  createOutboxRelay,
  migrateOutbox,
  writeOutboxEvent,
} from '../../src/runtime/outbox/index.js';
import {
  ConfirmedPublisher,
  createConsumerRunner,
  envelopeToAmqpMessage,
  rabbitRelayPublisher,
} from '../../src/runtime/rabbitmq/index.js';
import { ORDER_EVENT, createEffectsTable, effectConsumer } from '../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestBroker, drainQueue } from '../support/rabbitmq.js';
import { OUTAGE_TOPOLOGY } from '../outage/support/outage-topology.js';
import type { BenchResult } from './bench-result.js';
import amqp from 'amqplib';

const EVENTS = 2_000;
const AGGREGATES = 200;
const BATCH = 100;

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function writeEvents(db: Database, schema: string): Promise<void> {
  for (let i = 0; i < EVENTS; i += 100) {
    await db.transaction(async (tx) => {
      for (let k = i; k < i + 100; k++)
        await writeOutboxEvent(
          tx,
          ORDER_EVENT,
          { orderId: `o${k % AGGREGATES}`, seq: k },
          {},
          { schema, notifyChannel: false, assignAggregateVersion: true },
        );
    });
  }
}

export async function run(): Promise<BenchResult[]> {
  const test = await createTestSchema('evgen_bench_relay');
  const broker = await createTestBroker();
  const proxies: FaultProxy[] = [];
  const results: BenchResult[] = [];
  try {
    const db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
    const topology = await broker.declare(OUTAGE_TOPOLOGY, { tiers: [1_000] });
    const queue = topology.consumers['inventory-service']!.queue;
    const exchange = `${broker.prefix}order`;
    const routes = { 'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' } };

    // Raw first for both latencies (its messages are drained), then the relay for both, so the
    // queue ends up holding exactly the relay's messages, in version order, for the consumer part.
    const rawRates = new Map<number, number>();
    for (const phase of ['raw', 'relay'] as const) {
      for (const latencyMs of [0, 200]) {
        const proxy = await startFaultProxy({ targetPort: 5672 });
        proxies.push(proxy);
        proxy.latency(latencyMs);
        const connection = await amqp.connect(`amqp://guest:guest@127.0.0.1:${proxy.port}`);
        const label = latencyMs === 0 ? '' : ` +${latencyMs} ms`;
        if (phase === 'raw') {
          // The same messages, confirm channel, batches of BATCH, waiting for each batch's confirms.
          const raw = await connection.createConfirmChannel();
          const messages = Array.from({ length: EVENTS }, (_, k) =>
            envelopeToAmqpMessage({
              messageId: crypto.randomUUID(),
              eventType: 'order.OrderCreated',
              schemaVersion: 1,
              aggregateType: 'Order',
              aggregateId: `o${k % AGGREGATES}`,
              occurredAt: new Date().toISOString(),
              payload: { orderId: `o${k % AGGREGATES}`, seq: k },
            }),
          );
          const rawSeconds = await timed(async () => {
            for (let i = 0; i < EVENTS; i += BATCH) {
              for (const message of messages.slice(i, i + BATCH))
                raw.publish(exchange, 'order.created', message.content, {
                  ...message.properties,
                  mandatory: true,
                });
              await raw.waitForConfirms();
            }
          });
          await raw.close();
          await connection.close();
          await drainQueue(broker.channel, queue);
          rawRates.set(latencyMs, EVENTS / rawSeconds);
          continue;
        }
        // Relay: same count, batch size and in-flight window.
        await writeEvents(db, test.schema);
        const publisher = new ConfirmedPublisher(connection);
        const relay = createOutboxRelay({
          db,
          schema: test.schema,
          publisher: rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix }),
          notifyChannel: false,
          batchSize: BATCH,
          maxInFlight: BATCH,
        });
        const relaySeconds = await timed(async () => {
          let sent = 0;
          while (sent < EVENTS) sent += (await relay.runOnce()).published;
        });
        await publisher.close();
        await connection.close();
        results.push({
          name: `relay, ${AGGREGATES} aggregates${label}`,
          unit: 'events/s',
          subject: EVENTS / relaySeconds,
          baselineName: `raw confirmed publishing, batches of ${BATCH}${label}`,
          baseline: rawRates.get(latencyMs)!,
          note: `batch ${BATCH}, maxInFlight ${BATCH}`,
        });
      }
    }

    // Consumer: the messages the relay published (2 × EVENTS) at several prefetch values.
    const available = EVENTS * 2;
    let handledBefore = 0;
    const prefetchResults: string[] = [];
    let best = 0;
    for (const prefetch of [1, 10, 20, 50]) {
      const share = available / 4;
      const runner = createConsumerRunner({
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
        handler: effectConsumer(db, test.schema),
        prefetch,
      });
      const seconds = await timed(async () => {
        await runner.start();
        while (runner.metrics().handled + runner.metrics().deadLettered < share)
          await new Promise((resolve) => setTimeout(resolve, 20));
        await runner.stop();
      });
      handledBefore += runner.metrics().handled;
      const rate = runner.metrics().handled / seconds;
      best = Math.max(best, rate);
      prefetchResults.push(`prefetch ${prefetch}: ${rate.toFixed(0)}/s`);
    }
    results.push({
      name: 'consumer runner with per-aggregate lanes, best prefetch',
      unit: 'messages/s',
      subject: best,
      baselineName: 'itself (see note)',
      baseline: best,
      note: `${prefetchResults.join(', ')} (${handledBefore} handled over ${AGGREGATES} aggregates)`,
    });
  } finally {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await broker.cleanup();
    await test.drop();
  }
  return results;
}
