/**
 * The Kafka-only and RabbitMQ-only golden catalogs (`kafka-only/`, `rabbitmq-only/`): event.json
 * files with one transport block each. Their committed output has nothing of the other broker,
 * type-checks (generated-code.test.ts covers every golden case) and runs end to end on its own
 * broker: outbox writer → relay → broker → generated inbox-guarded consumer, on the real
 * PostgreSQL, Kafka (both adapters) and RabbitMQ.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  createKafkaConsumerRunner,
  createOutboxRelay,
  kafkaConsumerRoutes,
  kafkaRelayPublisher,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  type ConsumerRunnerEvent,
  type Database,
  type Publisher,
} from 'evgen/runtime';
import { expectedDir, listFiles, readExpected } from './golden-support.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS, waitFor } from '../support/kafka/test-kafka.js';
import { createTestBroker } from '../support/rabbitmq.js';
import { createLoyaltyAnalyticsConsumer } from './kafka-only/expected/consumers/loyalty-analytics.js';
import { ensureKafkaTopics, kafkaTopology } from './kafka-only/expected/kafka/topics.js';
import { kafkaRoutes } from './kafka-only/expected/kafka/producers.js';
import { writePointsAwardedV1 } from './kafka-only/expected/loyalty/points-awarded/outbox.js';
import { writePointsRedeemedV1 } from './kafka-only/expected/loyalty/points-redeemed/outbox.js';
import { createNotificationServiceConsumer } from './rabbitmq-only/expected/consumers/notification-service.js';
import { rabbitRoutes } from './rabbitmq-only/expected/rabbitmq/publishers.js';
import { rabbitTopology } from './rabbitmq-only/expected/rabbitmq/topology.js';
import { writeShipmentDelayedV1 } from './rabbitmq-only/expected/shipment/shipment-delayed/outbox.js';
import { writeShipmentDeliveredV1 } from './rabbitmq-only/expected/shipment/shipment-delivered/outbox.js';
import { writeShipmentDispatchedV1 } from './rabbitmq-only/expected/shipment/shipment-dispatched/outbox.js';

describe('single-transport catalogs generate nothing for the broker they do not use', () => {
  it.each([
    ['kafka-only', 'kafka', 'rabbitmq'],
    ['rabbitmq-only', 'rabbitmq', 'kafka'],
  ])('%s', (name, own, other) => {
    const files = listFiles(expectedDir(name));
    expect(files.filter((file) => file.startsWith(`${own}/`))).toHaveLength(2);
    expect(files.filter((file) => file.startsWith(`${other}/`))).toEqual([]);
    const envelopes = files.filter((file) => file.endsWith('/envelope.ts'));
    expect(envelopes.length).toBeGreaterThanOrEqual(2);
    for (const file of envelopes) {
      const descriptor = readExpected(name, file);
      expect(descriptor).toContain(`  ${own}: {`);
      expect(descriptor).not.toContain(`  ${other}: {`);
    }
  });
});

/** A schema with the outbox and inbox tables and an `effect` table the handlers write to. */
async function database(): Promise<{ pg: TestSchema; db: Database }> {
  const pg = await createTestSchema('evgen_single_transport');
  const db = postgresDatabase(pg.pool);
  await migrateOutbox(db, { schema: pg.schema });
  await migrateInbox(db, { schema: pg.schema });
  await pg.pool.query(
    `CREATE TABLE "${pg.schema}".effect (message_id text PRIMARY KEY, event_type text NOT NULL)`,
  );
  return { pg, db };
}

/** The handler body of every test consumer: one effect row per handled message. */
function recordEffect(schema: string) {
  return async (
    envelope: { messageId: string; eventType: string },
    ctx: { tx: { query(sql: string, params: unknown[]): Promise<unknown> } },
  ) => {
    await ctx.tx.query(`INSERT INTO "${schema}".effect VALUES ($1, $2)`, [
      envelope.messageId,
      envelope.eventType,
    ]);
  };
}

async function effects(pg: TestSchema): Promise<{ message_id: string; event_type: string }[]> {
  const { rows } = await pg.pool.query<{ message_id: string; event_type: string }>(
    `SELECT message_id, event_type FROM "${pg.schema}".effect ORDER BY message_id`,
  );
  return rows;
}

function relay(db: Database, pg: TestSchema, publisher: Publisher) {
  return createOutboxRelay({ db, publisher, schema: pg.schema, notifyChannel: false });
}

const byId = (a: { message_id: string }, b: { message_id: string }) =>
  a.message_id < b.message_id ? -1 : 1;

describe.each(KAFKA_CLIENTS)('Kafka-only catalog on the real broker: $name', ({ create }) => {
  it('outbox → relay → Kafka → generated consumer handles each event once', async () => {
    const kafka = await createTestKafka(create);
    const { pg, db } = await database();
    const client = create({ brokers: [kafka.brokers] });
    const producer = await client.producer();
    const options = { prefix: kafka.prefix, tiers: [200] };
    const runner = createKafkaConsumerRunner({
      handler: createLoyaltyAnalyticsConsumer({
        db,
        inbox: { schema: pg.schema },
        handlers: {
          'loyalty.PointsAwarded': { 1: recordEffect(pg.schema) },
          'loyalty.PointsRedeemed': { 1: recordEffect(pg.schema) },
        },
      }),
      kafka: {
        client,
        routes: kafkaConsumerRoutes(kafkaTopology, 'loyalty-analytics', options),
      },
    });
    try {
      const ensured = await ensureKafkaTopics(client, options);
      for (const topic of ensured.created) kafka.track('topic', topic);
      kafka.track('group', kafkaConsumerRoutes(kafkaTopology, 'loyalty-analytics', options).groupId);
      await runner.start();
      const accountId = randomUUID();
      const written = await db.transaction(async (tx) => [
        await writePointsAwardedV1(tx, { accountId, points: 50, reason: 'purchase' }, {}, {
          schema: pg.schema,
          notifyChannel: false,
        }),
        await writePointsRedeemedV1(tx, { accountId, points: 20, rewardId: 'mug' }, {}, {
          schema: pg.schema,
          notifyChannel: false,
        }),
      ]);
      const sent = await relay(
        db,
        pg,
        kafkaRelayPublisher(producer, kafkaRoutes, { prefix: kafka.prefix }),
      ).runOnce();
      expect(sent.published).toBe(2);
      await waitFor('both handled', () => (runner.metrics().handled === 2 ? true : undefined));
      expect(await effects(pg)).toEqual(
        written
          .map((e) => ({ message_id: e.messageId, event_type: e.eventType }))
          .sort(byId),
      );
      expect(runner.metrics()).toMatchObject({ deadLettered: 0, retried: 0 });
    } finally {
      await runner.stop();
      await producer.close();
      await kafka.cleanup();
      await pg.drop();
    }
  });
});

describe('RabbitMQ-only catalog on the real broker', () => {
  it('outbox → relay → RabbitMQ → generated consumer handles each event once; its declared "allow-gaps" lets ctx.inOrder apply past the unsubscribed version', async () => {
    const broker = await createTestBroker();
    const { pg, db } = await database();
    const confirmed = new ConfirmedPublisher(broker.connection);
    const events: ConsumerRunnerEvent[] = [];
    try {
      const topology = await broker.declare(rabbitTopology, { tiers: [100] });
      // Another service's queue takes ShipmentDelayed (unroutable otherwise, and refused).
      const otherQueue = `${broker.prefix}other-service`;
      await broker.channel.assertQueue(otherQueue, { durable: false });
      broker.track('queue', otherQueue);
      await broker.channel.bindQueue(otherQueue, `${broker.prefix}shipment`, 'shipment.delayed');
      const runner = createRabbitMqConsumerRunner({
        handler: createNotificationServiceConsumer({
          db,
          inbox: { schema: pg.schema },
          // Through ctx.inOrder: version 2 (ShipmentDelayed, not subscribed) never arrives, and
          // version 3 applies at once because the consumer declares "inOrder": "allow-gaps".
          handlers: {
            'shipment.ShipmentDispatched': {
              1: async (envelope, ctx) => {
                await ctx.inOrder(() => recordEffect(pg.schema)(envelope, ctx));
              },
            },
            'shipment.ShipmentDelivered': {
              1: async (envelope, ctx) => {
                await ctx.inOrder(() => recordEffect(pg.schema)(envelope, ctx));
              },
            },
          },
        }),
        onEvent: (event) => events.push(event),
        rabbitmq: {
          connection: broker.connection,
          routes: topology.consumers['notification-service']!,
        },
      });
      await runner.start();
      try {
        const shipmentId = randomUUID();
        const versioned = {
          schema: pg.schema,
          notifyChannel: false,
          assignAggregateVersion: true,
        } as const;
        const written = await db.transaction(async (tx) => {
          const dispatched = await writeShipmentDispatchedV1(
            tx,
            { shipmentId, carrier: 'DHL', dispatchedAt: new Date().toISOString() },
            {},
            versioned,
          );
          await writeShipmentDelayedV1(
            tx,
            { shipmentId, expectedAt: new Date().toISOString() },
            {},
            versioned,
          );
          const delivered = await writeShipmentDeliveredV1(
            tx,
            { shipmentId, deliveredAt: new Date().toISOString() },
            {},
            versioned,
          );
          return [dispatched, delivered];
        });
        expect(written.map((e) => e.aggregateVersion)).toEqual([1, 3]);
        // One record of an aggregate in flight at a time: a round per version.
        const outbox = relay(
          db,
          pg,
          rabbitRelayPublisher(confirmed, rabbitRoutes, { prefix: broker.prefix }),
        );
        let published = 0;
        while (published < 3) {
          const round = await outbox.runOnce();
          expect(round.failed).toBe(0);
          published += round.published;
        }
        await waitFor('both handled', () =>
          events.filter((e) => e.type === 'handled').length === 2 ? true : undefined,
        );
        expect(await effects(pg)).toEqual(
          written
            .map((e) => ({ message_id: e.messageId, event_type: e.eventType }))
            .sort(byId),
        );
        expect(
          events.filter((e) => ['dead-lettered', 'retried', 'gap-wait'].includes(e.type)),
        ).toEqual([]);
      } finally {
        await runner.stop();
      }
    } finally {
      await confirmed.close();
      await broker.cleanup();
      await pg.drop();
    }
  });
});
