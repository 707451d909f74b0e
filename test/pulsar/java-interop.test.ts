/**
 * Interop with Apache Pulsar's own Java client (`org.apache.pulsar:pulsar-client` 4.2.4), which
 * nobody here wrote, on the shared test broker, each test in a tenant and namespace of its own:
 * - Java reads what evgen wrote through the outbox relay and `publishPulsarEnvelope`: key =
 *   aggregateId, the envelope's ids as properties under Kafka's header names (plus the row's
 *   stored headers), the payload byte for byte, one partition per key and each key in order;
 * - evgen's consumer runner, with an inbox-guarded consumer, handles what a Java producer wrote
 *   (key-based batching, as Pulsar asks of producers feeding Key_Shared subscriptions), copies of
 *   the same messageId included: every effect once, each aggregate in order.
 */
import { acceptAnyDescriptor } from '../support/accept-any-descriptor.js';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  createOutboxRelay,
  createPulsarConsumerRunner,
  createPulsarProducers,
  ensurePulsarTopics,
  envelopeToPulsarMessage,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  publishPulsarEnvelope,
  pulsarConsumerTopics,
  pulsarRelayPublisher,
  pulsarWebSocketClient,
  type ConsumerContext,
  type Envelope,
  type PulsarOutboundMessage,
  type PulsarRoute,
} from 'evgen/runtime';
import { writePaymentCapturedV1 } from '../golden/pulsar-only/expected/payment/payment-captured/outbox.js';
import { createTestSchema } from '../support/postgres.js';
import {
  javaProduceLine,
  parseJavaReadMessages,
  runPulsarInterop,
} from '../support/pulsar/java-client.js';
import { TEST_PULSAR_SERVICE_URL } from '../support/pulsar/broker.js';
import { createTestPulsar, waitFor } from '../support/pulsar/test-pulsar.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("Pulsar's Java client", () => {
  it('reads what the relay and publishPulsarEnvelope wrote: key, properties, payload bytes, one partition and order per key', async () => {
    const pulsar = await createTestPulsar();
    closers.push(() => pulsar.cleanup());
    const [tenant, namespace] = (await pulsar.namespace('interop')).split('/') as [string, string];
    const route: PulsarRoute = { tenant, namespace, topic: 'payment.events', partitions: 3 };
    const topic = `persistent://${tenant}/${namespace}/payment.events`;
    await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [{ topic, partitions: 3 }]);
    const pg = await createTestSchema('evgen_pulsar_java');
    closers.push(() => pg.drop());
    const db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    // evgen's client, recording every message it sends: what Java must read byte for byte.
    const sent = new Map<string, PulsarOutboundMessage>();
    const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
    const producers = createPulsarProducers({
      name: client.name,
      consumer: (options) => client.consumer(options),
      async producer(topic, options) {
        const producer = await client.producer(topic, options);
        return {
          topic: producer.topic,
          send(message) {
            sent.set(message.properties!.messageId!, message);
            return producer.send(message);
          },
          ready: () => producer.ready!(),
          close: () => producer.close(),
        };
      },
    });
    closers.push(() => producers.close());

    // Through the outbox and the relay: 6 aggregates × 5 rows, interleaved, each with a header
    // stored with the row that travels as an extra property.
    const aggregates = Array.from({ length: 6 }, () => randomUUID());
    const written: { envelope: Envelope; extra: Record<string, string> }[] = [];
    for (let n = 0; n < 5; n++) {
      for (const paymentId of aggregates) {
        const extra = { 'x-origin': `checkout-${n}` };
        const envelope = await db.transaction((tx) =>
          writePaymentCapturedV1(
            tx,
            { paymentId, amountCents: 100 + n, currency: 'EUR' },
            { headers: extra },
            { schema: pg.schema, notifyChannel: false, assignAggregateVersion: true },
          ),
        );
        written.push({ envelope, extra });
      }
    }
    const relay = createOutboxRelay({
      db,
      schema: pg.schema,
      publisher: pulsarRelayPublisher(producers, { 'payment.PaymentCaptured': route }),
      notifyChannel: false,
      pollIntervalMs: 100,
    });
    closers.push(() => relay.stop());
    // Connected before the relay starts: on a loaded machine a new partitioned topic's first
    // connection can outlast the relay's publish timeout (the row is then sent again).
    await producers.producerFor(topic);
    await relay.start();
    await until('every row SENT', async () => {
      const { rows } = await pg.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${pg.schema}".outbox_event WHERE status = 'SENT'`,
      );
      return Number(rows[0]!.n) === written.length;
    });
    await relay.stop();
    // Straight through the producer helper, one property of the caller's beside evgen's.
    for (const paymentId of aggregates.slice(0, 2)) {
      const envelope = createEnvelope(
        acceptAnyDescriptor('payment.PaymentCaptured', {
          aggregateType: 'Payment',
          aggregateIdProperty: 'paymentId',
        }),
        { paymentId, amountCents: 1, currency: 'EUR' },
      );
      const extra = { tenantHint: 'ünïcödé ✓' };
      await publishPulsarEnvelope(producers, envelope, route, { properties: extra });
      written.push({ envelope, extra });
    }

    // Everything the topic holds: a send the relay gave up on after publishTimeoutMs (a slow
    // broker) may still be stored, so a row can be there twice, and Java must read the copies too.
    let stored = 0;
    for (let partition = 0; partition < 3; partition++) {
      const stats = (await pulsar.admin(
        'GET',
        `persistent/${tenant}/${namespace}/payment.events-partition-${partition}/stats`,
      )) as { msgInCounter: number };
      stored += stats.msgInCounter;
    }
    const messages = parseJavaReadMessages(
      await runPulsarInterop(
        ['consume', TEST_PULSAR_SERVICE_URL, topic, 'java-reader', String(stored)],
        '',
      ),
    );
    expect(messages).toHaveLength(stored);
    const byId = new Map(written.map((one) => [one.envelope.messageId, one]));
    for (const message of messages) {
      const one = byId.get(message.properties.messageId!);
      expect(one, `message ${message.messageId}`).toBeDefined();
      // What evgen sent for this envelope: the same key, properties and bytes reach Java.
      const out = sent.get(one!.envelope.messageId)!;
      expect(message.key).toBe(out.key);
      expect(message.key).toBe(one!.envelope.aggregateId);
      expect(message.properties).toEqual(out.properties);
      expect(message.properties).toMatchObject({
        ...one!.extra,
        messageId: one!.envelope.messageId,
        eventType: 'payment.PaymentCaptured',
        aggregateId: one!.envelope.aggregateId,
        ce_id: one!.envelope.messageId,
      });
      expect(message.payload.equals(out.payload)).toBe(true);
      expect(JSON.parse(message.payload.toString('utf8'))).toEqual(one!.envelope);
      expect(message.topic).toMatch(new RegExp(`^${topic}-partition-[0-2]$`));
    }
    const firsts = messages.filter(
      (m, i) => messages.findIndex((o) => o.properties.messageId === m.properties.messageId) === i,
    );
    expect(firsts.map((m) => m.properties.messageId).sort()).toEqual([...byId.keys()].sort());
    for (const paymentId of aggregates) {
      const mine = firsts.filter((m) => m.key === paymentId);
      // One partition per key, and the relay's rows in aggregate order, then the helper's.
      expect(new Set(mine.map((m) => m.topic)).size).toBe(1);
      const relayed = mine.filter((m) => m.properties.aggregateVersion !== undefined);
      expect(relayed.map((m) => Number(m.properties.aggregateVersion))).toEqual([1, 2, 3, 4, 5]);
      expect(mine.slice(0, relayed.length)).toEqual(relayed);
    }
    if (messages.length > firsts.length)
      console.log(`java-interop: ${messages.length - firsts.length} copies of rows sent again`);
    // The three partitions all carry keys: the routing was exercised.
    expect(new Set(messages.map((m) => m.topic)).size).toBeGreaterThan(1);
  }, 180_000);

  it("writes what evgen's consumer runner handles: copies of a messageId absorbed by the inbox, effects once, each aggregate in order", async () => {
    interface Payload {
      readonly orderId: string;
      readonly seq: number;
    }
    const cancelled = acceptAnyDescriptor<Payload>('order.OrderCancelled');
    const pulsar = await createTestPulsar();
    closers.push(() => pulsar.cleanup());
    const namespace = await pulsar.namespace('interop');
    const topic = `persistent://${namespace}/order.events`;
    await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [{ topic, partitions: 2 }]);
    const pg = await createTestSchema('evgen_pulsar_java');
    closers.push(() => pg.drop());
    const db = postgresDatabase(pg.pool);
    await migrateInbox(db, { schema: pg.schema });
    await pg.pool.query(
      `CREATE TABLE "${pg.schema}".effects (n serial PRIMARY KEY, message_id text NOT NULL, order_id text NOT NULL, seq int NOT NULL)`,
    );

    // Java writes 6 orders × 8 events, interleaved, then again the first event of every order and
    // two later ones: the same messageId in a new Pulsar message each time.
    const orders = Array.from({ length: 6 }, () => randomUUID());
    const events: Envelope<string, 1, Payload>[] = [];
    for (let seq = 1; seq <= 8; seq++)
      for (const orderId of orders) events.push(createEnvelope(cancelled, { orderId, seq }));
    const copies = [...events.slice(0, orders.length), events[20]!, events[41]!];
    const lines = [...events, ...copies].map((e) => javaProduceLine(envelopeToPulsarMessage(e)));
    const ids = (
      await runPulsarInterop(['produce', TEST_PULSAR_SERVICE_URL, topic], `${lines.join('\n')}\n`)
    )
      .split('\n')
      .filter((line) => line !== '');
    expect(ids).toHaveLength(lines.length);

    const consumer = createInboxConsumer(
      { name: 'java-fed', descriptors: [cancelled] },
      {
        db,
        inbox: { schema: pg.schema },
        handlers: {
          'order.OrderCancelled': {
            1: async (envelope: Envelope<string, 1, Payload>, ctx: ConsumerContext) => {
              await ctx.tx.query(
                `INSERT INTO "${pg.schema}".effects (message_id, order_id, seq) VALUES ($1, $2, $3)`,
                [envelope.messageId, envelope.payload.orderId, envelope.payload.seq],
              );
            },
          },
        },
      },
    );
    const runner = createPulsarConsumerRunner({
      client: pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl }),
      routes: pulsarConsumerTopics('java-fed', [topic], { retryTiersMs: [200] }),
      handler: consumer,
    });
    closers.push(() => runner.stop());
    await runner.start();
    await waitFor(
      'every message handled',
      () => (runner.metrics().handled >= lines.length ? true : undefined),
      120_000,
    );
    const { rows } = await pg.pool.query<{ message_id: string; order_id: string; seq: number }>(
      `SELECT message_id, order_id, seq FROM "${pg.schema}".effects ORDER BY n`,
    );
    expect(rows).toHaveLength(events.length);
    expect(new Set(rows.map((row) => row.message_id))).toEqual(
      new Set(events.map((e) => e.messageId)),
    );
    for (const orderId of orders)
      expect(rows.filter((row) => row.order_id === orderId).map((row) => row.seq)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8,
      ]);
    expect(runner.metrics()).toMatchObject({
      handled: lines.length,
      duplicates: copies.length,
      deadLettered: 0,
      retried: 0,
    });
  }, 180_000);
});
