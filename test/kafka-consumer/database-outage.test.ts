/**
 * A PostgreSQL outage under a Kafka consumer, on the real broker with both adapters: the handler's
 * database sits behind the TCP fault proxy, which refuses and resets every connection for a while
 * in the middle of the stream. An outage is not the records' fault: the runner pauses its
 * partitions, probes the database, and resumes where it stopped, so no retry attempt is used, no
 * record is dead-lettered, and every record has exactly one effect.
 *
 * Both cuts, 5 s and 90 s (far beyond the group's session timeout: the paused member must stay in
 * the group), run on both adapters, the four cases concurrently (each has its own proxy, pool,
 * schema and topics), so the file takes about as long as the 90 s case (~2 min).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  postgresDatabase,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
} from 'evgen/runtime';
import { createInventoryServiceConsumer } from '../../generated/consumers/inventory-service.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { inventoryOnKafka, waitFor, type InventoryOnKafka } from './support/inventory-on-kafka.js';

const CASES = KAFKA_CLIENTS.flatMap(({ name, create }) =>
  [5_000, 90_000].map((cutMs) => ({ name, create, cutMs })),
);

describe('Kafka consumer under a database outage', () => {
  it.concurrent.each(CASES)(
    '$name, PostgreSQL cut for $cutMs ms: no retry attempt used, no dead letter, every record handled once',
    async ({ name, create, cutMs }) => {
      let setup: InventoryOnKafka | undefined;
      let runner: KafkaConsumerRunner | undefined;
      let proxy: FaultProxy | undefined;
      let pool: pg.Pool | undefined;
      try {
        const s = (setup = await inventoryOnKafka(create, { partitions: 3, tiersMs: [300, 600] }));
        proxy = await startFaultProxy({
          targetPort: Number(new URL(TEST_DATABASE_URL).port || 5432),
        });
        const url = new URL(TEST_DATABASE_URL);
        url.hostname = proxy.host;
        url.port = String(proxy.port);
        const viaProxy = (pool = new pg.Pool({
          connectionString: url.toString(),
          max: 5,
          connectionTimeoutMillis: 1_000,
          options: `-c search_path=${s.pg.schema}`,
        }));
        // Connections reset by the proxy are reported here; the runner sees the failed queries.
        viaProxy.on('error', () => undefined);
        const db = postgresDatabase(viaProxy);
        const handler = createInventoryServiceConsumer({
          db,
          inbox: { schema: s.pg.schema },
          handlers: {
            'order.OrderCancelled': {
              1: async (envelope, ctx) => {
                await ctx.tx.query(
                  `INSERT INTO "${s.pg.schema}".effects (message_id, order_id) VALUES ($1, $2)`,
                  [envelope.messageId, envelope.payload.orderId],
                );
                // Keeps records in flight when the cut starts.
                await new Promise((resolve) => setTimeout(resolve, 5));
              },
            },
            'order.OrderCreated': { 2: async () => undefined },
          },
        });
        const events: KafkaConsumerRunnerEvent[] = [];
        runner = createKafkaConsumerRunner({
          handler,
          circuitBreaker: {
            backoff: { baseMs: 250, capMs: 2_000, jitter: 0 },
            healthCheck: () => viaProxy.query('SELECT 1'),
          },
          onEvent: (event) => events.push(event),
          kafka: {
            client: s.client,
            routes: s.routes,
          },
        });
        await runner.start();

        const orders = Array.from({ length: 20 }, () => randomUUID());
        const sent: string[] = [];
        for (let round = 0; round < 15; round++)
          for (const orderId of orders)
            sent.push((await s.publish(orderId, `r${round}`)).messageId);

        await waitFor(async () => (await s.effects()).size >= 30, 60_000, 'handling under way');
        await proxy.refuse();
        proxy.dropAll();
        await new Promise((resolve) => setTimeout(resolve, cutMs));
        // The cut was felt: records were still waiting when it ended.
        const beforeRestore = (await s.effects()).size;
        expect(beforeRestore).toBeLessThan(sent.length);
        await proxy.restore();
        const restoredAt = Date.now();

        await waitFor(
          async () => (await s.effects()).size > beforeRestore,
          120_000,
          'a record handled after the cut',
        );
        const firstMs = Date.now() - restoredAt;
        await waitFor(
          async () => (await s.effects()).size === sent.length,
          120_000,
          'every record handled after the cut',
        );
        console.log(
          `[database-outage] ${name}, cut ${cutMs} ms: ${sent.length - beforeRestore} records waited; first handled ${firstMs} ms, all ${Date.now() - restoredAt} ms after the database returned`,
        );
        const effects = await s.effects();
        expect([...effects.values()].every((count) => count === 1)).toBe(true);
        expect([...effects.keys()].sort()).toEqual([...sent].sort());
        const metrics = runner.metrics();
        expect(metrics.retried).toBe(0);
        expect(metrics.deadLettered).toBe(0);
        expect(metrics.pauses).toBeGreaterThanOrEqual(1);
        expect(events.filter((e) => e.type === 'retried' || e.type === 'dead-lettered')).toEqual(
          [],
        );
        for (const topic of [s.routes.deadLetter, ...s.routes.retry.map((tier) => tier.topic)]) {
          const ends = await s.kafka.admin.topicOffsets(topic);
          expect(
            ends.every((p) => p.end === '0'),
            topic,
          ).toBe(true);
        }
      } finally {
        await proxy?.restore();
        await runner?.stop();
        await pool?.end().catch(() => undefined);
        await proxy?.close();
        await setup?.cleanup();
      }
    },
    240_000,
  );
});
