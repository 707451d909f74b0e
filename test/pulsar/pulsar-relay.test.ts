/**
 * pulsarRelayPublisher on the real broker and PostgreSQL, with the Pulsar-only golden catalog's
 * committed outbox writer and routes (test/golden/pulsar-only):
 * - outbox → relay → Pulsar: every row SENT, read back with the WebSocket consumer: key =
 *   aggregateId, evgen's properties, payload = the stored envelope, each aggregate in order;
 * - faults through a TCP proxy in front of the broker's WebSocket port: the broker gone (refused,
 *   connections reset) and the broker hung (bytes stop, nobody is told, as under SIGSTOP), each
 *   longer than the attempt budget while rows are written: 0 DEAD, 0 SENT while it lasts (SENT
 *   only on the broker's acknowledgement), every row sent after recovery, 0 lost, order kept;
 * - a row over the WebSocket frame limit goes DEAD at once with UnpublishableMessageError, the
 *   rows around it are sent.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  createPulsarProducers,
  ensurePulsarTopology,
  migrateOutbox,
  postgresDatabase,
  pulsarRelayPublisher,
  pulsarWebSocketClient,
  type Database,
  type OutboxRelay,
  type PulsarConsumer,
  type PulsarInboundMessage,
  type PulsarProducers,
} from 'evgen/runtime';
import type { PublishFailure } from '../../src/runtime/outbox/relay-options.js';
import { pulsarRoutes } from '../golden/pulsar-only/expected/pulsar/publishers.js';
import { pulsarTopology } from '../golden/pulsar-only/expected/pulsar/topology.js';
import { writePaymentCapturedV1 } from '../golden/pulsar-only/expected/payment/payment-captured/outbox.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestPulsar, waitFor, type TestPulsar } from '../support/pulsar/test-pulsar.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Fixture {
  pulsar: TestPulsar;
  pg: TestSchema;
  db: Database;
  prefix: string;
  /** The partitioned topic PaymentCaptured goes to, with this test's prefix. */
  topic: string;
  received: PulsarInboundMessage[];
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

async function fixture(): Promise<Fixture> {
  const pulsar = await createTestPulsar();
  closers.push(() => pulsar.cleanup());
  const pg = await createTestSchema('evgen_pulsar_relay');
  closers.push(() => pg.drop());
  const db = postgresDatabase(pg.pool);
  await migrateOutbox(db, { schema: pg.schema });
  const prefix = `evgen-t-${randomBytes(4).toString('hex')}-`;
  // Only the topic in public/default: the golden's other namespace is another test's to create.
  const captured = pulsarTopology.topics.filter((t) => t.namespace === 'default');
  const ensured = await ensurePulsarTopology(
    { webServiceUrl: pulsar.webUrl },
    { topics: captured, consumers: [] },
    { prefix },
  );
  const topic = `persistent://public/default/${prefix}payment.events`;
  expect(ensured.createdTopics).toEqual([topic]);
  closers.push(() =>
    pulsar.admin(
      'DELETE',
      `persistent/public/default/${prefix}payment.events/partitions?force=true`,
    ),
  );
  // The reader: straight to the broker, never through the fault proxy.
  const received: PulsarInboundMessage[] = [];
  const consumer: PulsarConsumer = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl }).consumer(
    {
      topics: [topic],
      subscription: 'read-back',
    },
  );
  await consumer.start({
    onMessage(message) {
      received.push(message);
      consumer.ack(message);
    },
  });
  closers.push(() => consumer.close());
  return { pulsar, pg, db, prefix, topic, received };
}

/** Writes `perAggregate` PaymentCaptured rows for each aggregate, interleaved; returns their message ids. */
async function write(f: Fixture, aggregates: readonly string[], perAggregate: number, from = 0) {
  const ids: string[] = [];
  for (let n = 0; n < perAggregate; n++) {
    for (const paymentId of aggregates) {
      const envelope = await f.db.transaction((tx) =>
        writePaymentCapturedV1(
          tx,
          { paymentId, amountCents: 100 + from + n, currency: 'EUR' },
          {},
          { schema: f.pg.schema, notifyChannel: false, assignAggregateVersion: true },
        ),
      );
      ids.push(envelope.messageId);
    }
  }
  return ids;
}

async function statusCounts(f: Fixture): Promise<Record<string, number>> {
  const { rows } = await f.pg.pool.query<{ status: string; n: string }>(
    `SELECT status, count(*) AS n FROM "${f.pg.schema}".outbox_event GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * The messages of each key in arrival order, first copies only (a send that timed out and was
 * stored anyway comes twice): aggregateVersion must rise by one each time.
 */
function checkOrder(received: readonly PulsarInboundMessage[]): {
  distinct: number;
  duplicates: number;
} {
  const seen = new Set<string>();
  const versions = new Map<string, number[]>();
  let duplicates = 0;
  for (const message of received) {
    const id = message.properties.messageId!;
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    const list = versions.get(message.key!) ?? [];
    list.push(Number(message.properties.aggregateVersion));
    versions.set(message.key!, list);
  }
  for (const [key, list] of versions)
    expect(list, `versions of ${key} in arrival order`).toEqual(list.map((_, i) => i + 1));
  return { distinct: seen.size, duplicates };
}

function relayOn(
  f: Fixture,
  producers: PulsarProducers,
  failures: PublishFailure[] = [],
): OutboxRelay {
  const relay = createOutboxRelay({
    db: f.db,
    schema: f.pg.schema,
    publisher: pulsarRelayPublisher(producers, pulsarRoutes, { prefix: f.prefix }),
    notifyChannel: false,
    pollIntervalMs: 100,
    maxAttempts: 3,
    unavailableBackoff: { baseMs: 100, capMs: 1_000, jitter: 0 },
    hooks: { onFailed: (_message, failure) => failures.push(failure) },
  });
  closers.push(() => relay.stop());
  return relay;
}

describe('pulsarRelayPublisher', () => {
  it('outbox → relay → Pulsar: every row SENT and read back with key, properties and payload, each aggregate in order', async () => {
    const f = await fixture();
    const aggregates = Array.from({ length: 6 }, () => randomUUID());
    const ids = await write(f, aggregates, 8);
    const producers = createPulsarProducers(
      pulsarWebSocketClient({ webServiceUrl: f.pulsar.webUrl }),
    );
    closers.push(() => producers.close());
    const relay = relayOn(f, producers);
    await relay.start();
    await until('every row SENT', async () => (await statusCounts(f)).SENT === ids.length);
    await waitFor('every message read back', () =>
      f.received.length >= ids.length ? true : undefined,
    );
    const { distinct, duplicates } = checkOrder(f.received);
    expect({ distinct, duplicates }).toEqual({ distinct: ids.length, duplicates: 0 });
    const { rows } = await f.pg.pool.query<{ event_id: string; payload: unknown }>(
      `SELECT event_id, payload FROM "${f.pg.schema}".outbox_event`,
    );
    const stored = new Map(rows.map((row) => [row.event_id, row.payload]));
    for (const message of f.received) {
      const envelope = JSON.parse(message.payload.toString('utf8')) as {
        messageId: string;
        aggregateId: string;
        payload: unknown;
      };
      expect(message.key).toBe(envelope.aggregateId);
      expect(envelope.payload).toEqual(stored.get(envelope.messageId));
      expect(message.properties).toMatchObject({
        messageId: envelope.messageId,
        eventType: 'payment.PaymentCaptured',
        schemaVersion: '1',
        aggregateType: 'Payment',
        aggregateId: envelope.aggregateId,
        ce_id: envelope.messageId,
      });
    }
    expect(new Set(f.received.map((m) => m.properties.messageId))).toEqual(new Set(ids));
  });

  it.each([
    [
      'gone (connections refused and reset)',
      (proxy: FaultProxy) => proxy.refuse().then(() => proxy.dropAll()),
    ],
    ['hung (bytes stop both ways, as under SIGSTOP)', (proxy: FaultProxy) => proxy.blackhole()],
  ] as const)(
    'broker %s past the attempt budget: rows stay READY, none DEAD, all sent after recovery, 0 lost, order kept',
    async (_name, fault) => {
      const f = await fixture();
      const proxy = await startFaultProxy({
        targetHost: '127.0.0.1',
        targetPort: Number(new URL(f.pulsar.webUrl).port),
      });
      closers.push(() => proxy.close());
      const producers = createPulsarProducers(
        pulsarWebSocketClient({
          webServiceUrl: `http://127.0.0.1:${proxy.port}`,
          connectTimeoutMs: 1_000,
        }),
        { sendTimeoutMs: 1_500 },
      );
      closers.push(() => producers.close());
      const failures: PublishFailure[] = [];
      const relay = relayOn(f, producers, failures);
      const aggregates = Array.from({ length: 4 }, () => randomUUID());
      const before = await write(f, aggregates, 3);
      await relay.start();
      await until(
        'the first rows SENT',
        async () => (await statusCounts(f)).SENT === before.length,
      );

      await fault(proxy);
      const during = await write(f, aggregates, 4, 10);
      // More failed publishes than maxAttempts (3): were they counted as attempts, rows would be DEAD.
      await until('the relay to fail at least 8 publishes', async () => failures.length >= 8);
      const counts = await statusCounts(f);
      expect(counts.DEAD ?? 0).toBe(0);
      expect(counts.SENT).toBe(before.length);
      expect((counts.READY ?? 0) + (counts.PROCESSING ?? 0)).toBe(during.length);
      expect(failures.every((failure) => failure.unavailable === true && !failure.dead)).toBe(true);

      const restoredAt = Date.now();
      await proxy.restore();
      const total = before.length + during.length;
      await until(
        'every row SENT after recovery',
        async () => (await statusCounts(f)).SENT === total,
      );
      const recoveryMs = Date.now() - restoredAt;
      await waitFor('every message read back', () => {
        const distinct = new Set(f.received.map((m) => m.properties.messageId)).size;
        return distinct >= total ? true : undefined;
      });
      const { distinct, duplicates } = checkOrder(f.received);
      expect(distinct).toBe(total);
      expect(new Set(f.received.map((m) => m.properties.messageId))).toEqual(
        new Set([...before, ...during]),
      );
      expect((await statusCounts(f)).DEAD ?? 0).toBe(0);
      // Stated, not asserted (no timed asserts): what the run measured.
      console.log(
        `pulsar relay, broker ${_name}: ${total} rows, 0 lost, ${duplicates} duplicate(s), ${failures.length} unavailable publishes, all SENT ${recoveryMs} ms after recovery`,
      );
    },
  );

  it('a row over the WebSocket frame limit goes DEAD at once with UnpublishableMessageError; the others are sent', async () => {
    const f = await fixture();
    const [small, large, other] = [randomUUID(), randomUUID(), randomUUID()];
    const write1 = (paymentId: string, headers: Record<string, string> = {}) =>
      f.db.transaction((tx) =>
        writePaymentCapturedV1(
          tx,
          { paymentId, amountCents: 1, currency: 'EUR' },
          { headers },
          { schema: f.pg.schema, notifyChannel: false },
        ),
      );
    const first = await write1(small);
    // 1.1 MB of header: fits PostgreSQL, not the broker's default 1 MiB WebSocket frame.
    const tooLarge = await write1(large, { baggage: 'x'.repeat(1_100_000) });
    const last = await write1(other);
    const producers = createPulsarProducers(
      pulsarWebSocketClient({ webServiceUrl: f.pulsar.webUrl }),
    );
    closers.push(() => producers.close());
    const failures: PublishFailure[] = [];
    const relay = relayOn(f, producers, failures);
    await relay.start();
    await until('two rows SENT and one DEAD', async () => {
      const counts = await statusCounts(f);
      return counts.SENT === 2 && counts.DEAD === 1;
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ dead: true });
    expect((failures[0]!.error as Error).name).toBe('UnpublishableMessageError');
    const { rows } = await f.pg.pool.query<{
      event_id: string;
      status: string;
      last_error: string;
    }>(
      `SELECT event_id, status, last_error FROM "${f.pg.schema}".outbox_event WHERE status = 'DEAD'`,
    );
    expect(rows.map((row) => row.event_id)).toEqual([tooLarge.messageId]);
    expect(rows[0]!.last_error).toMatch(/webSocketMaxTextFrameSize/);
    await waitFor('both small messages', () => (f.received.length >= 2 ? true : undefined));
    await sleep(500);
    expect(f.received.map((m) => m.properties.messageId).sort()).toEqual(
      [first.messageId, last.messageId].sort(),
    );
  });
});
