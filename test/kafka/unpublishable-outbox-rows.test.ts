/**
 * What Kafka cannot carry never becomes an outbox row stuck as a "broker outage" (real
 * PostgreSQL, the real Kafka broker, each client adapter):
 * - the outbox writer refuses, at write time, a correlationId, traceId or causationId, a header
 *   or a payload that makes the record larger than a broker takes by default, with a
 *   ValidationError naming the field and the limit; nothing is written. What Kafka carries (a
 *   70 KB traceId and header, which RabbitMQ could not) is written, published and delivered;
 * - a row holding such a value (written behind the writer's back) ends DEAD with the reason after
 *   one attempt, and the row behind it in its aggregate waits READY and untried (the README's rule
 *   for a DEAD head) while other aggregates are published;
 * - a record the broker itself refuses (a topic whose max.message.bytes is below the default) in
 *   a send with other aggregates' records: only that record's row goes DEAD, the others are SENT.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  kafkaRelayPublisher,
  KAFKA_LIMITS,
  listDeadOutboxEvents,
  migrateOutbox,
  postgresDatabase,
  ValidationError,
  writeOutboxEvent,
  type Database,
  type EventVersionDescriptor,
  type OutboxWriteContext,
} from 'evgen/runtime';
import { type KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from '../outbox/support/test-event.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';

/** A Kafka-only event. */
const kafkaEvent: EventVersionDescriptor<'test.OrderPlaced', 1, OrderPlacedV1Payload> = {
  ...orderPlacedV1,
  kafka: { topic: 'orders' },
};
const HALF = Math.ceil(KAFKA_LIMITS.recordBatchBytes / 2);

/** Values that make the record too large, each with the pointer the writer names. */
const OVERSIZED: readonly {
  name: string;
  context?: OutboxWriteContext;
  note?: string;
  pointer: string;
}[] = [
  // Each id travels twice: in the envelope JSON and as a header.
  {
    name: 'correlationId of half the limit',
    context: { correlationId: 'c'.repeat(HALF) },
    pointer: '/correlationId',
  },
  {
    name: 'traceId of half the limit',
    context: { traceId: 't'.repeat(HALF) },
    pointer: '/traceId',
  },
  {
    name: 'causationId of half the limit',
    context: { causationId: 'c'.repeat(HALF) },
    pointer: '/causationId',
  },
  {
    name: 'a header over the limit',
    context: { headers: { 'x-big': 'h'.repeat(KAFKA_LIMITS.recordBatchBytes) } },
    pointer: '/headers/x-big',
  },
  {
    name: 'a payload over the limit',
    note: 'n'.repeat(KAFKA_LIMITS.recordBatchBytes),
    pointer: '/payload',
  },
];

describe.each(KAFKA_CLIENTS)('outbox rows Kafka cannot carry: $name', ({ create }) => {
  let kafka: TestKafka | undefined;
  let pg: TestSchema | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await kafka?.cleanup();
    await pg?.drop();
    kafka = undefined;
    pg = undefined;
  });

  async function setUp(partitions = 2, topicConfigs?: Record<string, string>) {
    kafka = await createTestKafka(create);
    pg = await createTestSchema('evgen_kafka_limits');
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    const [topic] = await kafka.createTopics([
      { topic: 'orders', partitions, ...(topicConfigs ? { configs: topicConfigs } : {}) },
    ]);
    const producer = await create({ brokers: [kafka.brokers] }).producer();
    closers.push(() => producer.close());
    const publisher = kafkaRelayPublisher(
      producer,
      { [kafkaEvent.eventType]: { topic: 'orders' } },
      { prefix: kafka.prefix },
    );
    return { db, schema: pg.schema, topic: topic!, publisher };
  }

  function write(
    db: Database,
    schema: string,
    orderId: string,
    context: OutboxWriteContext = {},
    note?: string,
  ) {
    return db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        kafkaEvent,
        { orderId, amount: 1, ...(note !== undefined ? { note } : {}) },
        context,
        { schema, notifyChannel: false },
      ),
    );
  }

  async function readRecords(topic: string, count: number): Promise<KafkaInboundRecord[]> {
    const consumer = create({ brokers: [kafka!.brokers] }).consumer({
      groupId: kafka!.group(`reader-${Math.random().toString(16).slice(2)}`),
      topics: [topic],
    });
    closers.push(() => consumer.close());
    const records: KafkaInboundRecord[] = [];
    await consumer.start({ onRecord: async (r) => void records.push(r) });
    await waitFor(`${count} records`, () => (records.length >= count ? true : undefined), 60_000);
    return records;
  }

  async function statuses(db: Database, schema: string) {
    const rows = await db.query<{ aggregate_id: string; status: string; attempts: number }>(
      `SELECT aggregate_id, status, attempts FROM "${schema}".outbox_event ORDER BY id`,
    );
    return rows.rows.map((row) => ({ ...row, attempts: Number(row.attempts) }));
  }

  it('the writer refuses each value Kafka cannot carry, naming the field and the limit; what Kafka carries is delivered', async () => {
    const { db, schema, topic, publisher } = await setUp();
    for (const { name, context, note, pointer } of OVERSIZED) {
      const error = await write(db, schema, `order-${name}`, context, note).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, name).toBeInstanceOf(ValidationError);
      const violation = (error as ValidationError).violations.find((v) => v.pointer === pointer);
      expect(violation, `${name}: ${(error as Error).message.slice(0, 300)}`).toBeDefined();
      expect(violation!.message).toContain('message.max.bytes');
      expect(violation!.message).toContain(String(KAFKA_LIMITS.recordBatchBytes - 1_024));
    }
    expect(await statuses(db, schema)).toEqual([]);
    // 70 KB ids and headers, beyond RabbitMQ's header table, are fine on Kafka.
    const within = await write(db, schema, 'within', {
      traceId: 't'.repeat(70_000),
      correlationId: 'c'.repeat(300),
      headers: { 'x-big': 'h'.repeat(70_000) },
    });
    const relay = createOutboxRelay({ db, schema, notifyChannel: false, publisher });
    expect(await relay.runOnce()).toMatchObject({ published: 1, failed: 0, dead: 0 });
    const [record] = await readRecords(topic, 1);
    expect(record!.headers.messageId).toBe(within.messageId);
    expect(record!.headers.traceId).toHaveLength(70_000);
    expect(record!.headers['x-big']).toHaveLength(70_000);
  });

  it('a row Kafka cannot carry ends DEAD with the reason; its aggregate waits behind it, others are published', async () => {
    const { db, schema, topic, publisher } = await setUp();
    const table = `"${schema}".outbox_event`;
    const corruptions = [
      `correlation_id = repeat('c', ${HALF})`,
      `headers = jsonb_build_object('x-big', repeat('h', ${KAFKA_LIMITS.recordBatchBytes}))`,
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
      publisher,
    });
    await relay.start();
    closers.push(() => relay.stop());
    const dead = await waitFor(
      'every bad head DEAD',
      async () => {
        const rows = await listDeadOutboxEvents(db, { schema });
        return rows.length === heads.length ? rows : undefined;
      },
      60_000,
    );
    const [record] = await readRecords(topic, 1);
    await relay.stop();
    expect(record!.headers.messageId).toBe(good.messageId);
    expect(dead.map((row) => row.messageId).sort()).toEqual([...heads].sort());
    for (const row of dead) {
      expect(row.attempts).toBe(1);
      expect(row.lastError).toContain('UnpublishableMessageError');
      expect(row.lastError).toContain('message.max.bytes');
      expect(row.blocked).toBe(1);
    }
    expect(dead.map((row) => row.lastError!).join('\n')).toContain('/correlationId');
    expect(dead.map((row) => row.lastError!).join('\n')).toContain('/headers/x-big');
    const rows = await statuses(db, schema);
    expect(rows.filter((row) => row.aggregate_id === 'good')).toEqual([
      { aggregate_id: 'good', status: 'SENT', attempts: 1 },
    ]);
    // Behind each DEAD head: READY, never tried.
    const behind = rows.filter(
      (row) => row.aggregate_id.startsWith('bad-') && row.status !== 'DEAD',
    );
    expect(behind).toEqual([
      { aggregate_id: 'bad-0', status: 'READY', attempts: 0 },
      { aggregate_id: 'bad-1', status: 'READY', attempts: 0 },
    ]);
  });

  it('a record the broker refuses ends DEAD alone; the other records of its send are SENT', async () => {
    // Below the default: the publisher's check lets the record through, the broker refuses it.
    // One partition: the broker refuses the whole batch, none of it is stored.
    const { db, schema, topic, publisher } = await setUp(1, { 'max.message.bytes': '20000' });
    const big = await write(db, schema, 'big', {}, 'n'.repeat(30_000));
    const others = ['a', 'b', 'c', 'd'];
    for (const orderId of others) await write(db, schema, orderId);
    const relay = createOutboxRelay({
      db,
      schema,
      notifyChannel: false,
      concurrency: 8,
      publisher,
    });
    // One round claims all five heads and hands them to the publisher together (one send).
    const result = await relay.runOnce();
    expect(result).toMatchObject({ published: others.length, dead: 1, failed: 0 });
    const [row] = await listDeadOutboxEvents(db, { schema });
    expect(row!.messageId).toBe(big.messageId);
    expect(row!.attempts).toBe(1);
    expect(row!.lastError).toContain('UnpublishableMessageError');
    expect(row!.lastError).toContain('MESSAGE_TOO_LARGE');
    const records = await readRecords(topic, others.length);
    expect(records.map((r) => r.key).sort()).toEqual(others);
  });
});
