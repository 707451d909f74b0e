/**
 * The outbox relay publishing to the real Kafka broker, per client adapter (real PostgreSQL):
 * - rows become SENT only after the broker acknowledged them, aggregates stay in order within
 *   their partition, and aggregates share sends;
 * - a relay process SIGKILLed after the broker acknowledged a record but before SENT: the record
 *   is published again after the lease (same messageId), and the inbox handles it once.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  handleWithInbox,
  kafkaRelayPublisher,
  migrateInbox,
  postgresDatabase,
  writeOutboxEvent,
  type Envelope,
  type KafkaProducer,
} from 'evgen/runtime';
import { type KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';
import { manualClock } from '../outbox/support/dialects.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';

const child = fileURLToPath(new URL('./support/kafka-relay-child.ts', import.meta.url));

describe.each(KAFKA_CLIENTS)('outbox relay to Kafka: $name', ({ name, create }) => {
  let kafka: TestKafka | undefined;
  let pgSchema: TestSchema | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await kafka?.cleanup();
    await pgSchema?.drop();
    kafka = undefined;
    pgSchema = undefined;
  });

  async function setUp(partitions: number) {
    kafka = await createTestKafka(create);
    pgSchema = await createTestSchema('evgen_kafka_relay');
    const db = postgresDatabase(pgSchema.pool);
    const { migrateOutbox } = await import('evgen/runtime');
    await migrateOutbox(db, { schema: pgSchema.schema });
    await migrateInbox(db, { schema: pgSchema.schema });
    const [topic] = await kafka.createTopics([{ topic: 'orders', partitions }]);
    const producer = await create({ brokers: [kafka.brokers] }).producer();
    closers.push(() => producer.close());
    return { db, topic: topic!, producer, schema: pgSchema.schema };
  }

  async function readAll(topic: string, count: number): Promise<KafkaInboundRecord[]> {
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

  it('marks rows SENT only after the acknowledgement, keeps each aggregate in order, batches aggregates', async () => {
    const { db, topic, producer, schema } = await setUp(4);
    const aggregates = Array.from({ length: 12 }, (_, i) => `order-${i}`);
    await db.transaction(async (tx) => {
      for (let round = 0; round < 5; round++) {
        for (const orderId of aggregates) {
          await writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId, amount: round },
            {},
            { schema, notifyChannel: false },
          );
        }
      }
    });
    let sends = 0;
    const counting: KafkaProducer = {
      send: (records) => {
        sends += 1;
        return producer.send(records);
      },
      partitionFor: (key, count) => producer.partitionFor(key, count),
      close: () => producer.close(),
    };
    const relay = createOutboxRelay({
      db,
      schema,
      notifyChannel: false,
      concurrency: 12,
      batchSize: 100,
      publisher: kafkaRelayPublisher(
        counting,
        { [orderPlacedV1.eventType]: { topic: 'orders' } },
        { prefix: kafka!.prefix },
      ),
    });
    let total = 0;
    while (total < 60) {
      const result = await relay.runOnce();
      expect(result.failed).toBe(0);
      total += result.published;
    }
    const rows = await db.query<{ status: string }>(`SELECT status FROM "${schema}".outbox_event`);
    expect(rows.rows.every((r) => r.status === 'SENT')).toBe(true);
    // Aggregates travelled together: far fewer sends than rows.
    expect(sends).toBeLessThanOrEqual(30);

    const records = await readAll(topic, 60);
    expect(records).toHaveLength(60);
    for (const orderId of aggregates) {
      const mine = records.filter((r) => r.key === orderId);
      expect(new Set(mine.map((r) => r.partition)).size).toBe(1);
      expect(mine[0]!.partition).toBe(producer.partitionFor(orderId, 4));
      const amounts = mine
        .sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)))
        .map(
          (r) =>
            (JSON.parse(r.value!.toString('utf8')) as Envelope<string, number, { amount: number }>)
              .payload.amount,
        );
      expect(amounts).toEqual([0, 1, 2, 3, 4]);
    }
  });

  it('a relay killed after the broker ack and before SENT: published twice, handled once', async () => {
    const { db, topic, producer, schema } = await setUp(2);
    const envelope = await db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'order-k', amount: 7 },
        {},
        { schema, notifyChannel: false },
      ),
    );
    const leaseMs = 60_000;
    const proc = spawnTypeScript(
      child,
      [
        TEST_DATABASE_URL,
        schema,
        String(leaseMs),
        name,
        kafka!.brokers,
        kafka!.prefix,
        orderPlacedV1.eventType,
        'orders',
      ],
      'ignore',
    );
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      proc.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) =>
        chunk.toString().includes(`acked ${envelope.messageId}`) ? resolve() : undefined,
      );
      proc.on('exit', (code) => reject(new Error(`relay child exited early (${code}): ${stderr}`)));
    });
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const stranded = await db.query<{ status: string }>(
      `SELECT status FROM "${schema}".outbox_event`,
    );
    expect(stranded.rows).toEqual([{ status: 'PROCESSING' }]);

    // After the lease another relay publishes it again.
    const clock = manualClock();
    const survivor = createOutboxRelay({
      db,
      schema,
      notifyChannel: false,
      clock: clock.clock,
      publisher: kafkaRelayPublisher(
        producer,
        { [orderPlacedV1.eventType]: { topic: 'orders' } },
        { prefix: kafka!.prefix },
      ),
    });
    clock.advance(leaseMs + 1);
    expect(await survivor.runOnce()).toMatchObject({ claimed: 1, published: 1 });

    const records = await readAll(topic, 2);
    expect(records.map((r) => r.headers.messageId)).toEqual([
      envelope.messageId,
      envelope.messageId,
    ]);
    await db.query(`CREATE TABLE "${schema}".effects (message_id text, order_id text)`);
    const outcomes = [];
    for (const record of records) {
      const received = JSON.parse(record.value!.toString('utf8')) as Envelope;
      outcomes.push(
        await handleWithInbox(
          db,
          { schema, consumer: 'billing', envelope: received },
          async (tx, e) => {
            await tx.query(`INSERT INTO "${schema}".effects VALUES ($1, $2)`, [
              e.messageId,
              e.aggregateId,
            ]);
          },
        ),
      );
    }
    expect(outcomes).toEqual(['handled', 'duplicate']);
    const effects = await db.query(`SELECT * FROM "${schema}".effects`);
    expect(effects.rows).toEqual([{ message_id: envelope.messageId, order_id: 'order-k' }]);
  });
});
