/**
 * What RabbitMQ cannot carry never becomes an outbox row stuck as a "broker outage" (real
 * PostgreSQL, real RabbitMQ):
 * - the outbox writer refuses, at write time, a correlationId over the AMQP short string's 255
 *   bytes, a 300-byte header name, and a traceId, causationId or header that makes the header
 *   table too large, with a ValidationError naming the field and the limit; nothing is written.
 *   What is just within the limits is written, published and delivered;
 * - a row holding such a value (written behind the writer's back) ends DEAD with the reason after
 *   one attempt, and the rows behind it in its aggregate wait READY and untried (the README's
 *   rule for a DEAD head) while other aggregates are published;
 * - amqplib's own encoding refusal is that message's fault, not a closed channel: the publisher
 *   reports it as UnpublishableMessageError and goes on publishing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AMQP_LIMITS,
  ConfirmedPublisher,
  createAmqpConnector,
  createOutboxRelay,
  listDeadOutboxEvents,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  UnpublishableMessageError,
  ValidationError,
  writeOutboxEvent,
  type Database,
  type EventVersionDescriptor,
  type OutboxWriteContext,
} from 'evgen/runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  createTestBroker,
  drainQueue,
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from '../outbox/support/test-event.js';

const ROUTE = { exchange: 'order', routingKey: 'order.created' } as const;
/** A RabbitMQ-only event, routed like SAMPLE_TOPOLOGY's OrderCreated. */
const rabbitEvent: EventVersionDescriptor<'order.OrderCreated', 1, OrderPlacedV1Payload> = {
  ...orderPlacedV1,
  eventType: 'order.OrderCreated',
  rabbitmq: ROUTE,
};
const QUEUE = 'inventory-service';

/** Values RabbitMQ cannot carry, each with the pointer and limit the writer names. */
const OVERSIZED: readonly {
  name: string;
  context: OutboxWriteContext;
  pointer: string;
  limit: string;
}[] = [
  {
    name: 'correlationId of 300 characters',
    context: { correlationId: 'c'.repeat(300) },
    pointer: '/correlationId',
    limit: 'at most 255 bytes',
  },
  {
    name: 'traceId of 70 KB',
    context: { traceId: 't'.repeat(70_000) },
    pointer: '/traceId',
    limit: 'at most 64512 bytes',
  },
  {
    name: 'causationId of 70 KB',
    context: { causationId: 'c'.repeat(70_000) },
    pointer: '/causationId',
    limit: 'at most 64512 bytes',
  },
  {
    name: 'a header of 70 KB',
    context: { headers: { 'x-big': 'h'.repeat(70_000) } },
    pointer: '/headers/x-big',
    limit: 'at most 64512 bytes',
  },
  {
    name: 'a header name of 300 characters',
    context: { headers: { ['n'.repeat(300)]: 'v' } },
    pointer: `/headers/${'n'.repeat(300)}`,
    limit: 'at most 255 bytes',
  },
];

describe('outbox rows RabbitMQ cannot carry', () => {
  let pg: TestSchema | undefined;
  let broker: TestBroker | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await broker?.cleanup();
    await pg?.drop();
    broker = undefined;
    pg = undefined;
  });

  async function setUp() {
    pg = await createTestSchema('evgen_rabbit_limits');
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    broker = await createTestBroker();
    await broker.declare(SAMPLE_TOPOLOGY);
    const connector = createAmqpConnector({ url: TEST_RABBITMQ_URL });
    const confirmed = new ConfirmedPublisher(connector);
    closers.push(() => connector.close());
    closers.push(() => confirmed.close());
    return { db, schema: pg.schema, confirmed, queue: `${broker.prefix}${QUEUE}` };
  }

  function write(db: Database, schema: string, orderId: string, context: OutboxWriteContext = {}) {
    return db.transaction((tx) =>
      writeOutboxEvent(tx, rabbitEvent, { orderId, amount: 1 }, context, {
        schema,
        notifyChannel: false,
      }),
    );
  }

  async function rowCount(db: Database, schema: string): Promise<number> {
    const result = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM "${schema}".outbox_event`,
    );
    return Number(result.rows[0]!.n);
  }

  it('the writer refuses each value RabbitMQ cannot carry, naming the field and the limit; nothing is written', async () => {
    const { db, schema } = await setUp();
    for (const { name, context, pointer, limit } of OVERSIZED) {
      const error = await write(db, schema, `order-${name}`, context).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, name).toBeInstanceOf(ValidationError);
      const violation = (error as ValidationError).violations.find((v) => v.pointer === pointer);
      expect(violation, `${name}: ${(error as Error).message.slice(0, 300)}`).toBeDefined();
      expect(violation!.message).toContain(limit);
      expect(violation!.message).toContain('RabbitMQ');
    }
    expect(await rowCount(db, schema)).toBe(0);
  });

  it('what is just within the limits is written, published and delivered', async () => {
    const { db, schema, confirmed, queue } = await setUp();
    const correlationId =
      'é'.repeat(AMQP_LIMITS.shortStringBytes / 5) +
      'c'.repeat(AMQP_LIMITS.shortStringBytes - (AMQP_LIMITS.shortStringBytes / 5) * 2);
    expect(Buffer.byteLength(correlationId)).toBe(AMQP_LIMITS.shortStringBytes);
    await write(db, schema, 'within', {
      correlationId,
      traceId: 't'.repeat(60_000),
      headers: { ['n'.repeat(255)]: 'v' },
    });
    const relay = createOutboxRelay({
      db,
      schema,
      notifyChannel: false,
      publisher: rabbitRelayPublisher(
        confirmed,
        { [rabbitEvent.eventType]: ROUTE },
        { prefix: broker!.prefix },
      ),
    });
    const result = await relay.runOnce();
    expect(result).toMatchObject({ published: 1, failed: 0, dead: 0 });
    const [delivered] = await waitFor('the delivery', async () => {
      const messages = await drainQueue(broker!.channel, queue);
      return messages.length > 0 ? messages : undefined;
    });
    expect(delivered!.properties.correlationId).toBe(correlationId);
    expect(String(delivered!.properties.headers!['x-evgen-trace-id'])).toHaveLength(60_000);
  });

  it('a row RabbitMQ cannot carry ends DEAD with the reason; its aggregate waits behind it, others are published', async () => {
    const { db, schema, confirmed, queue } = await setUp();
    const table = `"${schema}".outbox_event`;
    // Each bad head (written well-formed, then changed behind the writer's back) has a good row behind it.
    const corruptions = [
      `correlation_id = repeat('c', 300)`,
      `trace_id = repeat('t', 70000)`,
      `causation_id = repeat('c', 70000)`,
      `headers = jsonb_build_object('x-big', repeat('h', 70000))`,
      `headers = jsonb_build_object(repeat('n', 300), 'v')`,
    ];
    const heads: string[] = [];
    for (const [i, corruption] of corruptions.entries()) {
      const head = await write(db, schema, `bad-${i}`);
      await write(db, schema, `bad-${i}`);
      await db.query(`UPDATE ${table} SET ${corruption} WHERE event_id = $1`, [head.messageId]);
      heads.push(head.messageId);
    }
    const good = await write(db, schema, 'good');
    const relay = createOutboxRelay({
      db,
      schema,
      pollIntervalMs: 50,
      notifyChannel: false,
      publisher: rabbitRelayPublisher(
        confirmed,
        { [rabbitEvent.eventType]: ROUTE },
        { prefix: broker!.prefix },
      ),
    });
    await relay.start();
    closers.push(() => relay.stop());
    // Today's bug kept such rows READY forever as "broker unavailable": wait for the state, generously.
    const dead = await waitFor(
      'every bad head DEAD',
      async () => {
        const rows = await listDeadOutboxEvents(db, { schema });
        return rows.length === heads.length ? rows : undefined;
      },
      60_000,
    );
    await waitFor('the good row SENT', async () => {
      const rows = await db.query<{ status: string }>(
        `SELECT status FROM ${table} WHERE event_id = $1`,
        [good.messageId],
      );
      return rows.rows[0]!.status === 'SENT' ? true : undefined;
    });
    await relay.stop();
    expect(dead.map((row) => row.messageId).sort()).toEqual([...heads].sort());
    for (const row of dead) {
      expect(row.attempts).toBe(1);
      expect(row.lastError).toContain('UnpublishableMessageError');
      expect(row.lastError).not.toContain('broker unavailable');
      expect(row.blocked).toBe(1);
    }
    const reasons = dead.map((row) => row.lastError!).join('\n');
    for (const pointer of [
      '/correlationId',
      '/traceId',
      '/causationId',
      '/headers/x-big',
      `/headers/${'n'.repeat(300)}`,
    ])
      expect(reasons).toContain(pointer);
    // The rows behind each DEAD head wait READY and untried.
    const behind = await db.query<{ status: string; attempts: number }>(
      `SELECT status, attempts FROM ${table} WHERE aggregate_id LIKE 'bad-%' AND event_id <> ALL($1::uuid[])`,
      [heads],
    );
    expect(behind.rows).toHaveLength(heads.length);
    expect(behind.rows.every((row) => row.status === 'READY' && Number(row.attempts) === 0)).toBe(
      true,
    );
    // Only the good aggregate's event reached the queue.
    const delivered = await drainQueue(broker!.channel, queue);
    expect(delivered.map((message) => message.properties.messageId)).toEqual([good.messageId]);
  });

  it("amqplib's encoding refusal is the message's fault; the channel goes on publishing", async () => {
    const { confirmed, queue } = await setUp();
    const exchange = `${broker!.prefix}${ROUTE.exchange}`;
    const refused = await confirmed
      .publish(exchange, ROUTE.routingKey, Buffer.from('{}'), {
        messageId: 'too-long-correlation',
        correlationId: 'c'.repeat(300),
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(UnpublishableMessageError);
    expect((refused as UnpublishableMessageError).retryable).toBe(false);
    expect((refused as Error).message).toContain('correlationId');
    await confirmed.publish(exchange, ROUTE.routingKey, Buffer.from('{}'), { messageId: 'after' });
    const delivered = await waitFor('the delivery', async () => {
      const messages = await drainQueue(broker!.channel, queue);
      return messages.length > 0 ? messages : undefined;
    });
    expect(delivered.map((message) => message.properties.messageId)).toEqual(['after']);
  });
});
