/**
 * RabbitMQ transport costs against raw amqplib baselines measured in the same run (real
 * PostgreSQL, real RabbitMQ):
 * - relay → RabbitMQ: the outbox relay publishing through `rabbitRelayPublisher` (claim, confirmed
 *   + routed publish, mark SENT) vs raw amqplib confirm-channel publishing of the same messages
 *   (publish all, `waitForConfirms`) — no database at all, so this is the ceiling;
 * - consumer: the consumer runner with an inbox-guarded handler (`handleWithInbox` + one INSERT)
 *   vs a raw amqplib consumer doing the same SQL (BEGIN, inbox INSERT … ON CONFLICT, INSERT,
 *   UPDATE processed_at, COMMIT, ack) with the same prefetch.
 */
import {
  ConfirmedPublisher,
  createConsumerRunner,
  createOutboxRelay,
  envelopeToAmqpMessage,
  handleWithInbox,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Envelope,
  type EventVersionDescriptor,
  type RabbitTopology,
} from '../../src/runtime/index.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestBroker, waitFor } from '../support/rabbitmq.js';
import type { BenchResult } from './bench-result.js';

const MESSAGES = 3_000;
const PREFETCH = 20;

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

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function run(): Promise<BenchResult[]> {
  const pg = await createTestSchema('evgen_bench');
  const broker = await createTestBroker();
  const schema = pg.schema;
  const db = postgresDatabase(pg.pool);
  try {
    await migrateOutbox(db, { schema });
    await migrateInbox(db, { schema });
    await pg.pool.query(
      `CREATE TABLE "${schema}".stock_count (sku text NOT NULL, quantity int NOT NULL, message_id text NOT NULL)`,
    );
    const resolved = await broker.declare(topology, { tiers: [1000] });
    const queue = resolved.consumers['bench-consumer']!.queue;
    const exchange = `${broker.prefix}bench`;

    // Outbox rows (300 aggregates so the relay can publish in parallel), and their envelopes.
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

    // Baseline 1: raw amqplib confirmed publishing of the same messages.
    const rawChannel = await broker.connection.createConfirmChannel();
    const rawPublish = await timed(async () => {
      for (const envelope of envelopes) {
        const message = envelopeToAmqpMessage(envelope);
        if (!rawChannel.publish(exchange, 'stock.counted', message.content, message.properties)) {
          await new Promise((resolve) => rawChannel.once('drain', resolve));
        }
      }
      await rawChannel.waitForConfirms();
    });
    await rawChannel.close();
    await broker.channel.purgeQueue(queue);

    // Subject 1: the relay publishing the outbox rows through the confirmed publisher.
    const publisher = new ConfirmedPublisher(broker.connection);
    const relay = createOutboxRelay({
      db,
      publisher: rabbitRelayPublisher(publisher, routes, { prefix: broker.prefix }),
      schema,
      notifyChannel: false,
      batchSize: 500,
      concurrency: 32,
    });
    let published = 0;
    const relayTime = await timed(async () => {
      while (published < MESSAGES) {
        const result = await relay.runOnce();
        if (result.failed + result.dead > 0)
          throw new Error(`relay failed ${result.failed + result.dead} publishes`);
        published += result.published;
      }
    });
    await publisher.close();

    // Subject 2: the consumer runner with the inbox guard, draining the queue the relay filled.
    let handled = 0;
    const runner = createConsumerRunner({
      connection: broker.connection,
      routes: resolved.consumers['bench-consumer']!,
      prefetch: PREFETCH,
      handler: {
        name: 'bench-consumer',
        handle: (raw) => {
          const envelope = raw as Envelope<string, number, { sku: string; quantity: number }>;
          return handleWithInbox(
            db,
            { schema, consumer: 'bench-consumer', envelope },
            async (tx) => {
              await tx.query(
                `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
                [envelope.payload.sku, envelope.payload.quantity, envelope.messageId],
              );
            },
          );
        },
      },
      onEvent: (event) => {
        if (event.type === 'handled') handled++;
      },
    });
    const runnerTime = await timed(async () => {
      await runner.start();
      await waitFor(
        'the runner to drain the queue',
        () => (handled >= MESSAGES ? true : undefined),
        120_000,
      );
    });
    await runner.stop();

    // Baseline 2: a raw consumer doing the same database work, on the same messages re-published.
    const refill = await broker.connection.createConfirmChannel();
    for (const envelope of envelopes) {
      const message = envelopeToAmqpMessage(envelope);
      if (!refill.publish(exchange, 'stock.counted', message.content, message.properties))
        await new Promise((resolve) => refill.once('drain', resolve));
    }
    await refill.waitForConfirms();
    await refill.close();
    await pg.pool.query(`TRUNCATE "${schema}".stock_count, "${schema}".inbox_message`);
    const rawConsumer = await broker.connection.createChannel();
    await rawConsumer.prefetch(PREFETCH);
    let rawHandled = 0;
    const rawConsumeTime = await timed(async () => {
      await rawConsumer.consume(queue, (message) => {
        if (message === null) return;
        void (async () => {
          const envelope = JSON.parse(message.content.toString()) as Envelope<
            string,
            number,
            { sku: string; quantity: number }
          >;
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
          rawConsumer.ack(message);
          rawHandled++;
        })();
      });
      await waitFor(
        'the raw consumer to drain the queue',
        () => (rawHandled >= MESSAGES ? true : undefined),
        120_000,
      );
    });
    await rawConsumer.close();

    return [
      {
        name: 'relay → RabbitMQ (outbox claim, confirmed + routed publish, mark SENT)',
        unit: 'msg/s',
        subject: MESSAGES / relayTime,
        baselineName: 'raw amqplib confirm channel, publish all + waitForConfirms (no database)',
        baseline: MESSAGES / rawPublish,
        note: `${MESSAGES} messages, batch 500, 32 aggregates in parallel`,
      },
      {
        name: `consumer runner + inbox guard (prefetch ${PREFETCH})`,
        unit: 'msg/s',
        subject: MESSAGES / runnerTime,
        baselineName: 'raw amqplib consumer doing the same SQL, same prefetch',
        baseline: MESSAGES / rawConsumeTime,
        note: `${MESSAGES} messages; pg pool of 10`,
      },
    ];
  } finally {
    await broker.cleanup();
    await pg.drop();
  }
}
