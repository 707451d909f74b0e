/**
 * The example catalog's generated `inventory-service` consumer (committed `generated/`), run over
 * Kafka against the real broker and the real PostgreSQL (or, with `dialect: 'mariadb'`, the real
 * MariaDB): its own schema or database (inbox + an effects table written through the handler's
 * transaction), its own prefixed topics (event topic with several partitions, retry tiers,
 * dead-letter topic) and consumer group. Handlers can be told to fail for chosen messageIds, to
 * count effects per messageId afterwards.
 */
import { randomUUID } from 'node:crypto';
import {
  migrateInbox,
  mysqlDatabase,
  NonRetryableError,
  postgresDatabase,
  RetryableError,
  type Database,
  type KafkaClient,
  type KafkaConnection,
  type KafkaProducer,
} from 'evgen/runtime';
import { type KafkaTopicSpec } from '../../../src/runtime/kafka/kafka-client.js';
import { createInventoryServiceConsumer } from '../../../generated/consumers/inventory-service.js';
import { orderCancelledV1 } from '../../../generated/order/order-cancelled/envelope.js';
import type { KafkaConsumerRoutes } from '../../../src/runtime/kafka/consumer/kafka-consumer-types.js';
import { dialectOf } from '../../../src/runtime/db/sql-dialect.js';
import { createMariadbDatabase } from '../../support/mariadb.js';
import { createTestSchema, TEST_DATABASE_URL } from '../../support/postgres.js';
import { createTestKafka, type TestKafka } from '../../support/kafka/test-kafka.js';

export type Failure = 'retryable' | 'non-retryable';

export interface InventoryOnKafka {
  readonly kafka: TestKafka;
  readonly client: KafkaClient;
  /** The schema (PostgreSQL) or database (MariaDB) holding the inbox and the effects. */
  readonly schema: string;
  /** The URL the CLI reaches that database with (`postgres://…` or `mysql://…`). */
  readonly databaseUrl: string;
  /** `{ schema }`, as the PostgreSQL-only tests name it. */
  readonly pg: { readonly schema: string };
  readonly db: Database;
  readonly routes: KafkaConsumerRoutes;
  readonly producer: KafkaProducer;
  /** messageId → failures still to throw (retryable ones count down; 'always' never stops). */
  readonly failures: Map<string, { kind: Failure; times: number }>;
  /** Handler calls in order (messageIds), committed or not. */
  readonly calls: string[];
  handler(): ReturnType<typeof createInventoryServiceConsumer>;
  /** Publishes an OrderCancelled for `orderId` (the key); returns its envelope. */
  publish(orderId?: string, note?: string): Promise<ReturnType<typeof orderCancelledV1>>;
  /** An OrderCancelled envelope, not sent. */
  envelope(orderId?: string, note?: string): ReturnType<typeof orderCancelledV1>;
  /** Sends an envelope (again: a producer retrying after an unacknowledged send). */
  send(envelope: ReturnType<typeof orderCancelledV1>): Promise<void>;
  /** Sends raw bytes to the event topic. */
  publishRaw(key: string, value: string, headers?: Record<string, string>): Promise<void>;
  /** Effect rows per messageId. */
  effects(): Promise<Map<string, number>>;
  /** Effect rows in commit order: [orderId, note]. */
  effectOrder(): Promise<{ orderId: string; note: string | null }[]>;
  cleanup(): Promise<void>;
}

export interface InventoryOnKafkaOptions {
  readonly partitions?: number;
  readonly tiersMs?: readonly number[];
  readonly strict?: boolean;
  /** Delay inside the handler's transaction, ms (to have records in flight). */
  readonly handlerDelayMs?: number;
  /** Brokers (default: the shared test broker). */
  readonly brokers?: string;
  /** The database the inbox and effects live on (default PostgreSQL). */
  readonly dialect?: 'postgres' | 'mariadb';
}

interface InventoryStore {
  readonly db: Database;
  readonly schema: string;
  readonly url: string;
  drop(): Promise<void>;
}

async function openInventoryStore(dialect: 'postgres' | 'mariadb'): Promise<InventoryStore> {
  if (dialect === 'mariadb') {
    const test = await createMariadbDatabase('evgen_kafka_consumer');
    const db = mysqlDatabase(test.pool);
    await migrateInbox(db, { schema: test.schema });
    await db.query(
      `CREATE TABLE \`${test.schema}\`.effects (id BIGINT AUTO_INCREMENT PRIMARY KEY, message_id VARCHAR(64) NOT NULL, order_id VARCHAR(255) NOT NULL, note TEXT)`,
    );
    return { db, schema: test.schema, url: test.url, drop: () => test.drop() };
  }
  const pg = await createTestSchema('evgen_kafka_consumer');
  const db = postgresDatabase(pg.pool);
  await migrateInbox(db, { schema: pg.schema });
  await pg.pool.query(
    `CREATE TABLE "${pg.schema}".effects (id serial PRIMARY KEY, message_id text NOT NULL, order_id text NOT NULL, note text)`,
  );
  return { db, schema: pg.schema, url: TEST_DATABASE_URL, drop: () => pg.drop() };
}

export async function inventoryOnKafka(
  create: (connection: KafkaConnection) => KafkaClient,
  options: InventoryOnKafkaOptions = {},
): Promise<InventoryOnKafka> {
  const partitions = options.partitions ?? 3;
  const tiers = options.tiersMs ?? [300, 600];
  const kafka =
    options.brokers === undefined
      ? await createTestKafka(create)
      : await createTestKafka(create, options.brokers);
  const client = create({ brokers: [kafka.brokers] });
  const store = await openInventoryStore(options.dialect ?? 'postgres');
  const { db, schema } = store;
  const effects = dialectOf(db).qualifiedName(schema, 'effects');
  const routes: KafkaConsumerRoutes = {
    ...(await inventoryTopics(kafka, partitions, tiers)),
    ...(options.strict ? { strictEventTypes: ['order.OrderCancelled'] } : {}),
  };
  const topic = routes.topics[0];
  const producer = await client.producer({ timeoutMs: 15_000 });
  const failures = new Map<string, { kind: Failure; times: number }>();
  const calls: string[] = [];
  const handlerDelayMs = options.handlerDelayMs ?? 0;

  const handler = () =>
    createInventoryServiceConsumer({
      db,
      inbox: { schema },
      handlers: {
        'order.OrderCancelled': {
          1: async (envelope, ctx) => {
            calls.push(envelope.messageId);
            const failure = failures.get(envelope.messageId);
            if (failure !== undefined && failure.times > 0) {
              failure.times--;
              if (failure.kind === 'retryable') throw new RetryableError('stock database busy');
              throw new NonRetryableError('reservation in an illegal state');
            }
            const { param } = dialectOf(ctx.tx);
            await ctx.tx.query(
              `INSERT INTO ${effects} (message_id, order_id, note) VALUES (${param(1)}, ${param(2)}, ${param(3)})`,
              [envelope.messageId, envelope.payload.orderId, envelope.payload.note ?? null],
            );
            if (handlerDelayMs > 0) await new Promise((r) => setTimeout(r, handlerDelayMs));
          },
        },
        'order.OrderCreated': {
          2: async () => undefined,
        },
      },
    });

  const makeEnvelope = (orderId: string = randomUUID(), note?: string) =>
    orderCancelledV1({
      orderId,
      cancelledAt: new Date().toISOString(),
      reason: 'customer_request',
      ...(note !== undefined ? { note } : {}),
    });
  const send = async (envelope: ReturnType<typeof orderCancelledV1>) => {
    await producer.send([
      {
        topic: topic!,
        key: envelope.aggregateId,
        value: JSON.stringify(envelope),
        headers: { messageId: envelope.messageId, eventType: envelope.eventType },
      },
    ]);
  };

  return {
    kafka,
    client,
    schema,
    databaseUrl: store.url,
    pg: { schema },
    db,
    routes,
    producer,
    failures,
    calls,
    handler,
    envelope: makeEnvelope,
    send,
    async publish(orderId = randomUUID(), note?: string) {
      const envelope = makeEnvelope(orderId, note);
      await send(envelope);
      return envelope;
    },
    async publishRaw(key, value, headers = {}) {
      await producer.send([{ topic: topic!, key, value, headers }]);
    },
    async effects() {
      const { rows } = await db.query<{ message_id: string; n: unknown }>(
        `SELECT message_id, count(*) AS n FROM ${effects} GROUP BY message_id`,
      );
      return new Map(rows.map((row) => [row.message_id, Number(row.n)]));
    },
    async effectOrder() {
      const { rows } = await db.query<{ order_id: string; note: string | null }>(
        `SELECT order_id, note FROM ${effects} ORDER BY id`,
      );
      return rows.map((row) => ({ orderId: row.order_id, note: row.note }));
    },
    async cleanup() {
      await producer.close().catch(() => undefined);
      await kafka.admin.deleteGroups([routes.groupId]).catch(() => undefined);
      try {
        await kafka.cleanup();
      } finally {
        await store.drop();
      }
    },
  };
}

/**
 * The inventory-service's topics (event topic, one retry topic per tier, dead-letter topic),
 * created under the test's prefix, as consumer routes. The group is not registered with
 * kafka.group(): deleting a group that never joined fails on kafkajs, and one a killed member
 * still holds cannot be deleted either; callers delete it themselves, ignoring failures.
 */
export async function inventoryTopics(
  kafka: TestKafka,
  partitions: number,
  tiersMs: readonly number[],
  retryPartitions = partitions,
): Promise<KafkaConsumerRoutes> {
  const [topic, deadLetter, ...retryTopics] = await createTopicsSettled(kafka, [
    { topic: 'order.events', partitions },
    { topic: 'inventory-service.dlt', partitions: 1 },
    ...tiersMs.map((ms) => ({
      topic: `inventory-service.retry.${ms}ms`,
      partitions: retryPartitions,
    })),
  ]);
  return {
    consumer: 'inventory-service',
    groupId: `${kafka.prefix}inventory-service`,
    topics: [topic!],
    retry: tiersMs.map((delayMs, i) => ({ topic: retryTopics[i]!, delayMs })),
    deadLetter: deadLetter!,
  };
}

/**
 * Creates prefixed topics. kafkajs' admin sometimes reports a metadata error while it waits for
 * the new partitions' leaders although the topics were created: then wait until they are described.
 */
export async function createTopicsSettled(
  kafka: TestKafka,
  specs: readonly KafkaTopicSpec[],
): Promise<string[]> {
  try {
    return await kafka.createTopics(specs);
  } catch (error) {
    const names = specs.map((spec) => kafka.prefix + spec.topic);
    for (let tries = 0; tries < 50; tries++) {
      await new Promise((r) => setTimeout(r, 200));
      const described = await kafka.admin.describeTopics(names).catch(() => undefined);
      if (described?.every((d, i) => d.partitions === specs[i]!.partitions)) return names;
    }
    throw error;
  }
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
