/**
 * Outbox → relay → RabbitMQ → inbox-guarded consumer, with the code generated from the example
 * catalog, the real PostgreSQL and the real RabbitMQ.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  NonRetryableError,
  RetryableError,
  UnroutableError,
  createRabbitMqConsumerRunner,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  newMessageId,
  postgresDatabase,
  publishEnvelope,
  listRabbitMqDeadLetters,
  rabbitRelayPublisher,
  replayRabbitMqDeadLetters,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type Database,
  type Envelope,
  type InboxConsumer,
  type OutboundMessage,
  type Publisher,
  type RabbitRoutes,
  type RabbitTopology,
  type ResolvedTopology,
  type Transaction,
} from 'evgen/runtime';
import { EVGEN_HEADERS } from '../../src/runtime/rabbitmq/amqp-message.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestBroker, drainQueue, waitFor, type TestBroker } from '../support/rabbitmq.js';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';

interface Generated {
  rabbitTopology: RabbitTopology;
  rabbitRoutes: RabbitRoutes;
  writeOrderCancelledV1(
    tx: Transaction,
    payload: unknown,
    context?: object,
    options?: object,
  ): Promise<Envelope>;
  writeStockReleasedV1(
    tx: Transaction,
    payload: unknown,
    context?: object,
    options?: object,
  ): Promise<Envelope>;
  createInventoryServiceConsumer(options: object): InboxConsumer;
  publishOrderCreated(
    publisher: ConfirmedPublisher,
    envelope: Envelope,
    options?: object,
  ): Promise<void>;
  orderCreatedV2(payload: unknown, meta?: object): Envelope;
}

let example: GeneratedExample;
let generated: Generated;

beforeAll(async () => {
  example = await generateExample(import.meta.url);
  generated = {
    ...(await example.load<Pick<Generated, 'rabbitTopology'>>('rabbitmq/topology.ts')),
    ...(await example.load<Pick<Generated, 'rabbitRoutes' | 'publishOrderCreated'>>(
      'rabbitmq/publishers.ts',
    )),
    ...(await example.load<Pick<Generated, 'orderCreatedV2'>>('order/order-created/envelope.ts')),
    ...(await example.load<Pick<Generated, 'writeOrderCancelledV1'>>(
      'order/order-cancelled/outbox.ts',
    )),
    ...(await example.load<Pick<Generated, 'writeStockReleasedV1'>>(
      'inventory/stock-released/outbox.ts',
    )),
    ...(await example.load<Pick<Generated, 'createInventoryServiceConsumer'>>(
      'consumers/inventory-service.ts',
    )),
  };
});
afterAll(() => example?.remove());

// The outbox tests use OrderCancelled (small payload); the producer-helper test uses OrderCreated v2.
function orderCancelledPayload(orderId = randomUUID()) {
  return { orderId, cancelledAt: new Date().toISOString(), reason: 'customer_request' };
}

describe('outbox → relay → RabbitMQ → inbox (generated code, real PostgreSQL and RabbitMQ)', () => {
  let pg: TestSchema;
  let db: Database;
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let confirmed: ConfirmedPublisher;
  let runner: ConsumerRunner | undefined;
  let events: ConsumerRunnerEvent[];
  let spyQueue: string;

  beforeEach(async () => {
    pg = await createTestSchema();
    db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    await migrateInbox(db, { schema: pg.schema });
    await pg.pool.query(
      `CREATE TABLE "${pg.schema}".reservation (order_id text NOT NULL, message_id text NOT NULL)`,
    );
    broker = await createTestBroker();
    topology = await broker.declare(generated.rabbitTopology, { tiers: [100, 200] });
    confirmed = new ConfirmedPublisher(broker.connection);
    events = [];
    runner = undefined;
    // Sees every copy: original publishes (order exchange) and retries/dead letters (retry exchange).
    spyQueue = `${broker.prefix}spy`;
    await broker.channel.assertQueue(spyQueue, { durable: false });
    broker.track('queue', spyQueue);
    const routes = topology.consumers['inventory-service']!;
    await broker.channel.bindQueue(spyQueue, `${broker.prefix}order`, 'order.cancelled');
    for (const key of [...routes.tiers.map((t) => t.routingKey), routes.deadRoutingKey]) {
      await broker.channel.bindQueue(spyQueue, routes.retryExchange, key);
    }
  });

  afterEach(async () => {
    await runner?.stop();
    await confirmed.close();
    await broker.cleanup();
    await pg.drop();
  });

  function inventoryConsumer(
    onEvent: (envelope: Envelope, tx: Transaction) => Promise<void>,
  ): InboxConsumer {
    return generated.createInventoryServiceConsumer({
      db,
      inbox: { schema: pg.schema },
      handlers: {
        'order.OrderCreated': {
          2: (envelope: Envelope, ctx: { tx: Transaction }) => onEvent(envelope, ctx.tx),
        },
        'order.OrderCancelled': {
          1: (envelope: Envelope, ctx: { tx: Transaction }) => onEvent(envelope, ctx.tx),
        },
      },
      upcasters: { 'order.OrderCreated': { v1ToV2: (payload: object) => payload } },
    });
  }

  async function startRunner(handler: InboxConsumer): Promise<void> {
    runner = createRabbitMqConsumerRunner({
      handler,
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
        prefetch: 4,
      },
    });
    await runner.start();
  }

  const reserve = async (envelope: Envelope, tx: Transaction) => {
    const payload = envelope.payload as { orderId: string };
    await tx.query(
      `INSERT INTO "${pg.schema}".reservation (order_id, message_id) VALUES ($1, $2)`,
      [payload.orderId, envelope.messageId],
    );
  };

  const ofType = <T extends ConsumerRunnerEvent['type']>(type: T) =>
    events.filter((e): e is Extract<ConsumerRunnerEvent, { type: T }> => e.type === type);

  async function writeOrderCancelled(): Promise<Envelope> {
    return db.transaction((tx) =>
      generated.writeOrderCancelledV1(
        tx,
        orderCancelledPayload(),
        { traceId: 'trace-e2e' },
        { schema: pg.schema, notifyChannel: false },
      ),
    );
  }

  function relay(publisher: Publisher) {
    return createOutboxRelay({
      db,
      publisher,
      schema: pg.schema,
      notifyChannel: false,
      backoff: { baseMs: 1, capMs: 1, jitter: 0 },
    });
  }

  it('handles an event once in effect although the relay published it twice (crash after confirm, before SENT)', async () => {
    const rabbit = rabbitRelayPublisher(confirmed, generated.rabbitRoutes, {
      prefix: broker.prefix,
    });
    let publishes = 0;
    const crashingOnce: Publisher = {
      async publish(message: OutboundMessage) {
        await rabbit.publish(message);
        publishes++;
        if (publishes === 1) throw new Error('relay died after the broker confirmed');
      },
    };
    await startRunner(inventoryConsumer(reserve));
    const written = await writeOrderCancelled();
    const outbox = relay(crashingOnce);
    expect((await outbox.runOnce()).failed).toBe(1);
    await waitFor('the retry to be due', async () =>
      (await outbox.runOnce()).published === 1 ? true : undefined,
    );
    expect(publishes).toBe(2);

    await waitFor('both deliveries', () => (ofType('handled').length === 2 ? true : undefined));
    expect(
      ofType('handled')
        .map((e) => e.result)
        .sort(),
    ).toEqual(['duplicate', 'handled']);
    const reservations = await pg.pool.query(`SELECT message_id FROM "${pg.schema}".reservation`);
    expect(reservations.rows).toEqual([{ message_id: written.messageId }]);

    // One messageId everywhere: outbox row, both AMQP messages, inbox row.
    const row = await pg.pool.query(`SELECT event_id, status FROM "${pg.schema}".outbox_event`);
    expect(row.rows).toEqual([{ event_id: written.messageId, status: 'SENT' }]);
    const copies = await drainQueue(broker.channel, spyQueue);
    expect(copies.map((c) => c.properties.messageId)).toEqual([
      written.messageId,
      written.messageId,
    ]);
    expect(copies[0]!.properties.headers![EVGEN_HEADERS.traceId]).toBe('trace-e2e');
    const inbox = await pg.pool.query(
      `SELECT message_id, consumer FROM "${pg.schema}".inbox_message`,
    );
    expect(inbox.rows).toEqual([{ message_id: written.messageId, consumer: 'inventory-service' }]);
  });

  it('retries a handler that fails twice through the tiers and handles it once, keeping the messageId', async () => {
    let calls = 0;
    await startRunner(
      inventoryConsumer(async (envelope, tx) => {
        calls++;
        // The inbox insert of a failing attempt rolls back with it: the retry is not skipped.
        await reserve(envelope, tx);
        if (calls <= 2) throw new RetryableError(`warehouse service timed out (${calls})`);
      }),
    );
    const written = await writeOrderCancelled();
    expect(
      (
        await relay(
          rabbitRelayPublisher(confirmed, generated.rabbitRoutes, { prefix: broker.prefix }),
        ).runOnce()
      ).published,
    ).toBe(1);
    await waitFor('handled', () => ofType('handled')[0]);
    expect(calls).toBe(3);
    expect(ofType('retried').map((e) => e.delayMs)).toEqual([100, 200]);
    const reservations = await pg.pool.query(`SELECT message_id FROM "${pg.schema}".reservation`);
    expect(reservations.rows).toEqual([{ message_id: written.messageId }]);
    const inbox = await pg.pool.query(`SELECT message_id FROM "${pg.schema}".inbox_message`);
    expect(inbox.rows).toEqual([{ message_id: written.messageId }]);
    const copies = await drainQueue(broker.channel, spyQueue);
    expect(copies.map((c) => [c.fields.routingKey, c.properties.messageId])).toEqual([
      ['order.cancelled', written.messageId],
      ['retry.100ms', written.messageId],
      ['retry.200ms', written.messageId],
    ]);
  });

  it('dead-letters a schema-invalid message with diagnostics and reads a newer version (FULL_TRANSITIVE) while the ones behind them are handled', async () => {
    await startRunner(inventoryConsumer(reserve));
    const base = {
      eventType: 'order.OrderCancelled',
      aggregateType: 'Order',
      aggregateId: 'o-poison',
      occurredAt: new Date().toISOString(),
      traceId: 'trace-poison',
    };
    const invalid = {
      ...base,
      messageId: newMessageId(),
      schemaVersion: 1,
      payload: { orderId: 'not-a-uuid' },
    } as Envelope;
    // The example catalog's OrderCancelled is FULL_TRANSITIVE: old readers read new data, so the
    // generated consumer reads v9 with its v1 reader (the added property is ignored).
    const newerPayload = orderCancelledPayload();
    const newer = {
      ...base,
      aggregateId: newerPayload.orderId,
      messageId: newMessageId(),
      schemaVersion: 9,
      payload: { ...newerPayload, addedInV9: 'ignored by v1 readers' },
    } as Envelope;
    const route = generated.rabbitRoutes['order.OrderCancelled']!;
    await publishEnvelope(confirmed, invalid, route, { prefix: broker.prefix });
    await publishEnvelope(confirmed, newer, route, { prefix: broker.prefix });
    const good = await writeOrderCancelled();
    await relay(
      rabbitRelayPublisher(confirmed, generated.rabbitRoutes, { prefix: broker.prefix }),
    ).runOnce();

    await waitFor('newer and good handled', () =>
      ofType('handled').length === 2 ? true : undefined,
    );
    await waitFor('one dead letter', () =>
      ofType('dead-lettered').length === 1 ? true : undefined,
    );
    expect(ofType('retried')).toHaveLength(0);
    const dead = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(dead.map((d) => d.properties.messageId as string)).toEqual([invalid.messageId]);
    const invalidLetter = dead[0]!;
    expect(JSON.parse(invalidLetter.content.toString())).toEqual(invalid);
    expect(invalidLetter.properties.headers).toMatchObject({
      [EVGEN_HEADERS.errorType]: 'ValidationError',
      [EVGEN_HEADERS.attempts]: 1,
      [EVGEN_HEADERS.consumer]: 'inventory-service',
      [EVGEN_HEADERS.originalExchange]: `${broker.prefix}order`,
      [EVGEN_HEADERS.originalRoutingKey]: 'order.cancelled',
      [EVGEN_HEADERS.traceId]: 'trace-poison',
    });
    const inbox = await pg.pool.query<{ message_id: string }>(
      `SELECT message_id FROM "${pg.schema}".inbox_message`,
    );
    expect(inbox.rows.map((r) => r.message_id).sort()).toEqual(
      [good.messageId, newer.messageId].sort(),
    );
    const reservations = await pg.pool.query(
      `SELECT order_id FROM "${pg.schema}".reservation WHERE message_id = $1`,
      [newer.messageId],
    );
    expect(reservations.rows).toEqual([{ order_id: newerPayload.orderId }]);
  });

  it('replays a dead letter through the inbox guard: same messageId, handled once; a second copy is a duplicate', async () => {
    let broken = true;
    await startRunner(
      inventoryConsumer(async (envelope, tx) => {
        if (broken) throw new NonRetryableError('reservation rules reject it');
        await reserve(envelope, tx);
      }),
    );
    const fixed = await writeOrderCancelled();
    const other = await writeOrderCancelled();
    await relay(
      rabbitRelayPublisher(confirmed, generated.rabbitRoutes, { prefix: broker.prefix }),
    ).runOnce();
    await waitFor('two dead letters', () =>
      ofType('dead-lettered').length === 2 ? true : undefined,
    );
    expect((await pg.pool.query(`SELECT 1 FROM "${pg.schema}".inbox_message`)).rowCount).toBe(0);

    const routes = topology.consumers['inventory-service']!;
    // Listing shows each letter with its diagnostics and removes nothing.
    const letters = await listRabbitMqDeadLetters({ connection: broker.connection, routes });
    expect(letters.map((l) => l.messageId).sort()).toEqual(
      [fixed.messageId, other.messageId].sort(),
    );
    for (const letter of letters) {
      expect(letter.eventType).toBe('order.OrderCancelled');
      expect(JSON.parse(letter.content.toString()).messageId).toBe(letter.messageId);
      expect(letter.diagnostics).toMatchObject({
        consumer: 'inventory-service',
        errorType: 'NonRetryableError',
        attempts: 1,
        traceId: 'trace-e2e',
        originalExchange: `${broker.prefix}order`,
        originalRoutingKey: 'order.cancelled',
      });
      expect(letter.diagnostics.errorMessage).toContain('reservation rules reject it');
      expect(typeof letter.diagnostics.firstFailureAt).toBe('string');
      expect(typeof letter.diagnostics.lastFailureAt).toBe('string');
      expect(typeof letter.diagnostics.deadLetteredAt).toBe('string');
    }
    expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(2);

    broken = false;
    const first = await replayRabbitMqDeadLetters({
      connection: broker.connection,
      routes,
      filter: (letter) => letter.messageId === fixed.messageId,
    });
    expect(first).toEqual({ replayed: [fixed.messageId], kept: 1 });
    // A fresh attempt count: the replayed copy is attempt 1 again, not dead-lettered at once.
    expect(await waitFor('replay handled', () => ofType('handled')[0])).toMatchObject({
      messageId: fixed.messageId,
      attempt: 1,
      result: 'handled',
    });
    expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(1);

    // The same letter a second time (say an operator replays a copy of it): the inbox skips it.
    const route = generated.rabbitRoutes['order.OrderCancelled']!;
    await confirmed.publish('', routes.deadQueue, Buffer.from(JSON.stringify(fixed)), {
      messageId: fixed.messageId,
      contentType: 'application/json',
      headers: {
        [EVGEN_HEADERS.originalRoutingKey]: route.routingKey,
        [EVGEN_HEADERS.attempts]: 1,
      },
    });
    const second = await replayRabbitMqDeadLetters({ connection: broker.connection, routes });
    expect(second).toEqual({ replayed: [other.messageId, fixed.messageId], kept: 0 });
    await waitFor('all replays handled', () => (ofType('handled').length === 3 ? true : undefined));
    // The last two run concurrently (prefetch 4): compare without their order.
    const outcomes = ofType('handled').map((e) => `${e.messageId} ${String(e.result)}`);
    expect(outcomes[0]).toBe(`${fixed.messageId} handled`);
    expect(outcomes.slice(1).sort()).toEqual(
      [`${other.messageId} handled`, `${fixed.messageId} duplicate`].sort(),
    );
    expect(runner!.metrics()).toMatchObject({
      handled: 3,
      duplicates: 1,
      deadLettered: 2,
      retried: 0,
    });
    const effects = await pg.pool.query(
      `SELECT message_id FROM "${pg.schema}".reservation ORDER BY message_id`,
    );
    expect(effects.rows).toEqual(
      [fixed.messageId, other.messageId].sort().map((id) => ({ message_id: id })),
    );
    const inbox = await pg.pool.query(
      `SELECT message_id FROM "${pg.schema}".inbox_message ORDER BY message_id`,
    );
    expect(inbox.rows).toEqual(effects.rows);
    expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(0);
  });

  it('delivers an event published with the generated producer helper to the subscribed consumer', async () => {
    await startRunner(inventoryConsumer(reserve));
    const money = { amountMinor: 1250, currency: 'EUR' };
    const envelope = generated.orderCreatedV2(
      {
        orderId: randomUUID(),
        customerId: randomUUID(),
        placedAt: new Date().toISOString(),
        channel: 'web',
        lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: money }],
        total: money,
        shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
      },
      { traceId: 'trace-helper' },
    );
    await generated.publishOrderCreated(confirmed, envelope, { prefix: broker.prefix });
    const handled = await waitFor('handled', () => ofType('handled')[0]);
    expect(handled).toMatchObject({ messageId: envelope.messageId, result: 'handled' });
    const inbox = await pg.pool.query(`SELECT message_id FROM "${pg.schema}".inbox_message`);
    expect(inbox.rows).toEqual([{ message_id: envelope.messageId }]);
  });

  it('fails the relay publish of an event no queue is bound for, and keeps the row unsent', async () => {
    // Nobody subscribes to inventory.StockReleased, so its routing key reaches no queue.
    const written = await db.transaction((tx) =>
      generated.writeStockReleasedV1(
        tx,
        {
          reservationId: randomUUID(),
          orderId: randomUUID(),
          reason: 'expired',
          releasedAt: new Date().toISOString(),
        },
        {},
        { schema: pg.schema, notifyChannel: false },
      ),
    );
    const failures: unknown[] = [];
    const outbox = createOutboxRelay({
      db,
      publisher: rabbitRelayPublisher(confirmed, generated.rabbitRoutes, { prefix: broker.prefix }),
      schema: pg.schema,
      notifyChannel: false,
      hooks: { onFailed: (_message, failure) => failures.push(failure.error) },
    });
    expect(await outbox.runOnce()).toMatchObject({ published: 0, failed: 1 });
    expect(failures[0]).toBeInstanceOf(UnroutableError);
    const row = await pg.pool.query(
      `SELECT event_id, status, last_error FROM "${pg.schema}".outbox_event`,
    );
    expect(row.rows[0]).toMatchObject({ event_id: written.messageId, status: 'READY' });
    expect(row.rows[0].last_error).toMatch(/unroutable/);
  });
});
