/**
 * The CDC relay end to end on real parts, for each source database: the generated writer in CDC
 * mode writes into a private logical-decoding PostgreSQL or a private row-binlog MariaDB,
 * Debezium (Kafka Connect 4.4.0, the generated connector config; the PostgreSQL or MariaDB
 * connector) streams the rows to the test broker, and evgen's Kafka consumer runner (each
 * adapter) handles them through the inbox:
 * - one effect per messageId, per-aggregate order kept, the outbox table empty;
 * - a rolled-back business transaction publishes nothing;
 * - several events written in one statement (writeCdcOutboxEvents) arrive as the same records;
 * - `evgen outbox status --cdc` shows the empty table, the active slot and its lag (MariaDB: the
 *   binlog reader), and the connector's state; `evgen trace` finds an event whose row is long
 *   gone on its topic (one record) and in the consumer's inbox;
 * - the records are the polling relay's records: same key, same (Java murmur2) partition, same
 *   headers (absent optional headers absent), the same envelope as value, read by a Java client.
 * One worker and one connector serve each database's tests (a Connect start takes seconds); the
 * databases run one after the other.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createEnvelopeParser,
  createOutboxRelay,
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  writeCdcOutboxEvents,
  type Envelope,
  type OutboxWriteContext,
} from 'evgen/runtime';
import { writeOrderCancelledV1 } from '../../generated/order/order-cancelled/outbox.js';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import type { OrderCancelledV1Payload } from '../../generated/order/order-cancelled/types.js';
import { runOutboxStatus } from '../../src/cli/commands/outbox.js';
import { runTrace } from '../../src/cli/commands/trace.js';
import { parseInteropRecords, runJava } from '../support/kafka/java.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { createTopicsSettled, waitFor } from '../kafka-consumer/support/inventory-on-kafka.js';
import { cdcConsumer } from './support/cdc-consumer.js';
import { CDC_SOURCE_KINDS, startCdcSource, type AnyCdcSource } from './support/cdc-source.js';

const payload = (orderId: string, note?: string): OrderCancelledV1Payload => ({
  orderId,
  cancelledAt: '2026-03-01T10:00:00.000Z',
  reason: 'customer_request',
  ...(note !== undefined ? { note } : {}),
});

/** Runs a CLI command function, returning its exit code and what it printed. */
async function captured(run: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  try {
    return { code: await run(), stdout };
  } finally {
    spy.mockRestore();
  }
}

describe.each(CDC_SOURCE_KINDS)('CDC relay from %s', (kind) => {
  let cdc: AnyCdcSource;

  beforeAll(async () => {
    cdc = await startCdcSource(kind);
    await cdc.startConnector();
  }, 180_000);

  afterAll(async () => {
    await cdc?.destroy();
  }, 60_000);

  describe.each(KAFKA_CLIENTS)(
    'CDC outbox → Debezium → Kafka → consumer runner ($name)',
    ({ create }) => {
      const consumer = cdcConsumer();
      afterEach(() => consumer.stop());

      it('one effect per messageId in aggregate order; a rolled-back transaction publishes nothing', async () => {
        const s = await consumer.start(create);
        const cdcOptions = { mode: 'cdc', topicPrefix: s.kafka.prefix } as const;
        await cdc.createOrdersTable();

        const aggregates = Array.from({ length: 5 }, () => randomUUID());
        const written: Envelope[] = [];
        // Transactions of several events, each with a business row.
        for (let round = 0; round < 4; round++) {
          written.push(
            ...(await cdc.db.transaction(async (tx) => {
              const envelopes = [];
              for (const orderId of aggregates) {
                await cdc.upsertOrder(tx, orderId, `cancelled-${round}`);
                envelopes.push(
                  await writeOrderCancelledV1(tx, payload(orderId, `n${round}`), {}, cdcOptions),
                );
              }
              return envelopes;
            })),
          );
        }
        // A business transaction that fails after writing its event: neither row survives.
        let rolledBack: Envelope | undefined;
        const doomed = randomUUID();
        await expect(
          cdc.db.transaction(async (tx) => {
            await cdc.upsertOrder(tx, doomed, 'x');
            rolledBack = await writeOrderCancelledV1(tx, payload(doomed), {}, cdcOptions);
            throw new Error('business rule failed after the outbox write');
          }),
        ).rejects.toThrow('business rule failed');
        // Written after the rollback: once it is handled, the log held nothing else before it.
        const marker = await cdc.db.transaction((tx) =>
          writeOrderCancelledV1(tx, payload(randomUUID(), 'marker'), {}, cdcOptions),
        );

        // Debezium sends in commit order: once everything written before and after the rollback
        // was handled, the rolled-back event would have been on the topic already.
        await waitFor(
          async () => (await s.effects()).size >= written.length + 1,
          60_000,
          'every committed event handled',
        );
        const offsets = await s.kafka.admin.topicOffsets(s.routes.topics[0]!);
        expect(offsets.reduce((n, p) => n + Number(p.end) - Number(p.start), 0)).toBe(
          written.length + 1,
        );
        const effects = await s.effects();
        for (const envelope of [...written, marker])
          expect(effects.get(envelope.messageId)).toBe(1);
        expect(effects.has(rolledBack!.messageId)).toBe(false);
        expect(effects.size).toBe(written.length + 1);
        // Per aggregate the effects follow the write order.
        const order = await s.effectOrder();
        for (const orderId of aggregates) {
          expect(order.filter((e) => e.orderId === orderId).map((e) => e.note)).toEqual([
            'n0',
            'n1',
            'n2',
            'n3',
          ]);
        }
        expect(await cdc.count('outbox_cdc_event')).toBe(0);
        expect(await cdc.count('orders', { id: doomed })).toBe(0);
      }, 120_000);
    },
  );

  describe('operator view of a CDC outbox', () => {
    const consumer = cdcConsumer();
    afterEach(() => consumer.stop());

    it('outbox status --cdc: rows, slot or binlog reader, and connector; trace: the record on its topic and the inbox', async () => {
      const s = await consumer.start(KAFKA_CLIENTS[0]!.create);
      const envelope = await cdc.db.transaction((tx) =>
        writeOrderCancelledV1(
          tx,
          payload(randomUUID()),
          {},
          { mode: 'cdc', topicPrefix: s.kafka.prefix },
        ),
      );
      await waitFor(async () => (await s.effects()).has(envelope.messageId), 60_000, 'handled');

      const status = await captured(() =>
        runOutboxStatus({
          cdc: true,
          databaseUrl: cdc.url,
          ...(cdc.kind === 'postgres' ? { slot: cdc.slot } : {}),
          connectUrl: cdc.worker.restUrl,
          connector: cdc.connector,
          failOnDead: true,
          json: true,
        }),
      );
      expect(status.code).toBe(0);
      const report = JSON.parse(status.stdout) as {
        rows: number;
        slots: { slotName: string; active: boolean; lagBytes: number }[];
        binlog?: { readers: number; file: string | null; position: number | null };
        connector: { state: string; tasks: { state: string }[] };
      };
      expect(report.rows).toBe(0);
      if (cdc.kind === 'postgres') {
        expect(report.slots).toHaveLength(1);
        expect(report.slots[0]).toMatchObject({ slotName: cdc.slot, active: true });
        expect(typeof report.slots[0]!.lagBytes).toBe('number');
      } else {
        // Debezium is the server's one replica; root may read the binlog position.
        expect(report.slots).toEqual([]);
        expect(report.binlog).toMatchObject({
          readers: 1,
          file: expect.stringMatching(/^binlog\./),
        });
        expect(report.binlog!.position).toBeGreaterThan(0);
      }
      expect(report.connector.state).toBe('RUNNING');
      expect(report.connector.tasks.map((t) => t.state)).toEqual(['RUNNING']);
      // The worker commits source offsets every second here: the status says once it has.
      await waitFor(
        async () => {
          const again = await captured(() =>
            runOutboxStatus({
              cdc: true,
              databaseUrl: cdc.url,
              connectUrl: cdc.worker.restUrl,
              connector: cdc.connector,
              json: true,
            }),
          );
          const { connector } = JSON.parse(again.stdout) as {
            connector: { offsetsCommitted: boolean | null };
          };
          return connector.offsetsCommitted === true;
        },
        30_000,
        'the connector reported as having committed source offsets',
      );

      const trace = await captured(() =>
        runTrace(envelope.messageId, {
          cdc: true,
          databaseUrl: TEST_DATABASE_URL,
          schema: s.pg.schema,
          kafkaBrokers: s.kafka.brokers,
          prefix: s.kafka.prefix,
        }),
      );
      expect(trace.code).toBe(0);
      expect(trace.stdout).toContain('outbox: a CDC outbox');
      expect(trace.stdout).toContain(`published: ${s.routes.topics[0]} partition `);
      expect(trace.stdout).toContain(`key ${envelope.aggregateId}`);
      expect(trace.stdout).toContain('inbox: inventory-service committed it');
    }, 120_000);
  });

  describe('CDC records are the polling relay records', () => {
    it('same key, Java partition, headers (absent ones absent) and envelope, read by a Java consumer', async () => {
      const { create } = KAFKA_CLIENTS[0]!;
      const kafka = await createTestKafka(create);
      const relaySchema = await createTestSchema('evgen_cdc_relay');
      const producer = await create({ brokers: [kafka.brokers] }).producer();
      try {
        const [cdcTopic, relayTopic] = await createTopicsSettled(kafka, [
          { topic: 'order.events', partitions: 6 },
          { topic: 'relay.order.events', partitions: 6 },
        ]);
        const relayDb = postgresDatabase(relaySchema.pool);
        await migrateOutbox(relayDb, { schema: relaySchema.schema });
        // Every optional envelope field and the trace context on some events, none on others.
        const contexts: OutboxWriteContext[] = Array.from({ length: 12 }, (_, i) => ({
          messageId: randomUUID(),
          occurredAt: new Date(Date.UTC(2026, 2, 1, 10, 0, i, 123)),
          ...(i % 2 === 0
            ? {
                aggregateVersion: i + 1,
                traceId: `trace-${i}`,
                correlationId: `corr-${i}`,
                causationId: `cause-${i}`,
                headers: { traceparent: `00-${'a'.repeat(31)}${i % 10}-${'b'.repeat(16)}-01` },
              }
            : {}),
          ...(i % 3 === 0 ? { traceId: `only-trace-${i}` } : {}),
        }));
        const orderIds = Array.from({ length: 5 }, () => randomUUID());
        const payloads = contexts.map((_, i) =>
          payload(orderIds[i % 5]!, i === 4 ? 'héllo "quoted" ✓' : undefined),
        );
        const written: Envelope[] = [];
        await cdc.db.transaction(async (tx) => {
          // The first half one write each, the rest in one statement: the same records either way.
          for (const [i, context] of contexts.slice(0, 6).entries()) {
            written.push(
              await writeOrderCancelledV1(tx, payloads[i]!, context, {
                mode: 'cdc',
                topicPrefix: kafka.prefix,
              }),
            );
          }
          written.push(
            ...(await writeCdcOutboxEvents(
              tx,
              contexts.slice(6).map((context, i) => ({
                descriptor: orderCancelledV1Descriptor,
                payload: payloads[i + 6]!,
                context,
              })),
              { topicPrefix: kafka.prefix },
            )),
          );
        });
        await relayDb.transaction(async (tx) => {
          for (const [i, context] of contexts.entries()) {
            await writeOrderCancelledV1(tx, payloads[i]!, context, {
              schema: relaySchema.schema,
              notifyChannel: false,
            });
          }
        });
        const relay = createOutboxRelay({
          db: relayDb,
          schema: relaySchema.schema,
          notifyChannel: false,
          publisher: kafkaRelayPublisher(
            producer,
            { [orderCancelledV1Descriptor.eventType]: { topic: 'relay.order.events' } },
            { prefix: kafka.prefix },
          ),
        });
        let published = 0;
        while (published < contexts.length) published += (await relay.runOnce()).published;

        const read = async (topic: string) =>
          parseInteropRecords(
            await runJava('InteropConsumer', [
              kafka.brokers,
              topic,
              kafka.group(`java-${topic}`),
              String(contexts.length),
              '6',
            ]),
          );
        const fromCdc = await read(cdcTopic!);
        const fromRelay = await read(relayTopic!);
        expect(fromCdc).toHaveLength(contexts.length);
        const relayById = new Map(fromRelay.map((r) => [r.headers.messageId, r]));
        const writtenById = new Map(written.map((e) => [e.messageId, e]));
        const parse = createEnvelopeParser([orderCancelledV1Descriptor]);
        for (const record of fromCdc) {
          const envelope = writtenById.get(record.headers.messageId!)!;
          const twin = relayById.get(envelope.messageId)!;
          expect(record.key).toBe(envelope.aggregateId);
          expect(record.partition).toBe(record.javaPartition);
          expect(record.partition).toBe(twin.partition);
          // CDC has no publish step in evgen, so the record carries the writer's trace context.
          // This process has no OpenTelemetry SDK, so the polling relay makes no publish span and
          // sends the writer's context too (with an SDK it sends its publish span's: test/telemetry).
          expect(record.headers.traceparent).toBe(
            contexts.find((c) => c.messageId === envelope.messageId)!.headers?.traceparent,
          );
          expect(record.headers).toEqual(twin.headers);
          // The value is the writer's envelope JSON byte for byte; the relay's parses the same.
          expect(record.value).toBe(JSON.stringify(envelope));
          expect(JSON.parse(record.value)).toEqual(JSON.parse(twin.value));
          expect(parse(record.value)).toEqual({ ok: true, envelope });
        }
        const bare = fromCdc.find((r) => r.headers.messageId === contexts[1]!.messageId)!;
        for (const absent of [
          'aggregateVersion',
          'traceId',
          'correlationId',
          'causationId',
          'traceparent',
        ]) {
          expect(bare.headers).not.toHaveProperty(absent);
        }
        // Each aggregate's records in write order within its partition.
        for (const orderId of new Set(written.map((e) => e.aggregateId))) {
          const offsets = fromCdc
            .filter((r) => r.key === orderId)
            .sort((a, b) => a.offset - b.offset)
            .map((r) => r.headers.messageId);
          expect(offsets).toEqual(
            written.filter((e) => e.aggregateId === orderId).map((e) => e.messageId),
          );
        }
      } finally {
        await producer.close();
        await kafka.cleanup();
        await relaySchema.drop();
      }
    }, 300_000);
  });
});
