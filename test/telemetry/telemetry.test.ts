/**
 * OpenTelemetry through evgen, with the SDK's in-memory exporters, the real PostgreSQL and the
 * real RabbitMQ: one messageId makes one connected trace (the writer's span → the relay's publish
 * span → the consumer's process span, linked to the publish span), and the runtime's counts come
 * out as metrics.
 */
import { randomUUID } from 'node:crypto';
import { context, metrics, propagation, trace, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  registerEvgenMetrics,
  type ConsumerRunner,
  type Database,
  type Envelope,
  type InboxConsumer,
  type RabbitRoutes,
  type RabbitTopology,
  type ResolvedTopology,
  type Transaction,
} from 'evgen/runtime';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { createTestBroker, waitFor, type TestBroker } from '../support/rabbitmq.js';

interface Generated {
  rabbitTopology: RabbitTopology;
  rabbitRoutes: RabbitRoutes;
  writeOrderCancelledV1(
    tx: Transaction,
    payload: unknown,
    context?: object,
    options?: object,
  ): Promise<Envelope>;
  createInventoryServiceConsumer(options: object): InboxConsumer;
}

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(spans)],
});
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const metricReader = new PeriodicExportingMetricReader({
  exporter: metricExporter,
  exportIntervalMillis: 3_600_000,
});
const meterProvider = new MeterProvider({ readers: [metricReader] });

let example: GeneratedExample;
let generated: Generated;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  example = await generateExample(import.meta.url);
  generated = {
    ...(await example.load<Pick<Generated, 'rabbitTopology'>>('rabbitmq/topology.ts')),
    ...(await example.load<Pick<Generated, 'rabbitRoutes'>>('rabbitmq/publishers.ts')),
    ...(await example.load<Pick<Generated, 'writeOrderCancelledV1'>>(
      'order/order-cancelled/outbox.ts',
    )),
    ...(await example.load<Pick<Generated, 'createInventoryServiceConsumer'>>(
      'consumers/inventory-service.ts',
    )),
  };
});
afterAll(async () => {
  example?.remove();
  trace.disable();
  context.disable();
  propagation.disable();
  metrics.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

describe('OpenTelemetry (real PostgreSQL and RabbitMQ, in-memory exporters)', () => {
  let pg: TestSchema;
  let db: Database;
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let confirmed: ConfirmedPublisher;
  let runner: ConsumerRunner;

  beforeEach(async () => {
    spans.reset();
    pg = await createTestSchema();
    db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    await migrateInbox(db, { schema: pg.schema });
    broker = await createTestBroker();
    topology = await broker.declare(generated.rabbitTopology, { tiers: [100] });
    confirmed = new ConfirmedPublisher(broker.connection);
    runner = createRabbitMqConsumerRunner({
      handler: generated.createInventoryServiceConsumer({
        db,
        inbox: { schema: pg.schema },
        handlers: {
          'order.OrderCreated': { 2: async () => undefined },
          'order.OrderCancelled': {
            // The handler's own span must nest under the consumer's process span.
            1: async () => trace.getTracer('service').startSpan('reserve stock').end(),
          },
        },
        upcasters: { 'order.OrderCreated': { v1ToV2: (payload: object) => payload } },
      }),
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
      },
    });
    await runner.start();
  });

  afterEach(async () => {
    await runner.stop();
    await confirmed.close();
    await broker.cleanup();
    await pg.drop();
  });

  function relay() {
    return createOutboxRelay({
      db,
      publisher: rabbitRelayPublisher(confirmed, generated.rabbitRoutes, { prefix: broker.prefix }),
      schema: pg.schema,
      notifyChannel: false,
    });
  }

  async function writeInSpan(): Promise<Envelope> {
    return trace.getTracer('service').startActiveSpan('cancel order', async (span) => {
      try {
        return await db.transaction((tx) =>
          generated.writeOrderCancelledV1(
            tx,
            {
              orderId: randomUUID(),
              cancelledAt: new Date().toISOString(),
              reason: 'customer_request',
            },
            {},
            { schema: pg.schema, notifyChannel: false },
          ),
        );
      } finally {
        span.end();
      }
    });
  }

  it('one messageId makes one connected trace: write → relay publish → consumer process → handler', async () => {
    const envelope = await writeInSpan();
    const row = await pg.pool.query<{ headers: Record<string, string> }>(
      `SELECT headers FROM "${pg.schema}".outbox_event WHERE event_id = $1`,
      [envelope.messageId],
    );
    expect(row.rows[0]!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    await relay().runOnce();
    await waitFor('handled', () => (runner.metrics().handled === 1 ? true : undefined));
    await waitFor('four spans', () => (spans.getFinishedSpans().length >= 4 ? true : undefined));

    const finished = spans.getFinishedSpans();
    const byName = new Map(finished.map((span) => [span.name, span]));
    const root = byName.get('cancel order')!;
    const publish = byName.get('order.OrderCancelled publish')!;
    const process = byName.get('order.OrderCancelled process')!;
    const handler = byName.get('reserve stock')!;
    expect([root, publish, process, handler].every(Boolean)).toBe(true);
    const traceId = root.spanContext().traceId;
    expect(finished.map((span) => span.spanContext().traceId)).toEqual(finished.map(() => traceId));
    expect(publish.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(publish.kind).toBe(SpanKind.PRODUCER);
    expect(publish.attributes['messaging.message.id']).toBe(envelope.messageId);
    expect(process.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.links.map((link) => link.context.spanId)).toEqual([
      publish.spanContext().spanId,
    ]);
    expect(process.attributes).toMatchObject({
      'messaging.message.id': envelope.messageId,
      'messaging.system': 'rabbitmq',
      'messaging.consumer.group.name': 'inventory-service',
      'evgen.inbox.result': 'handled',
    });
    expect(handler.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
  });

  it('a redelivered duplicate is its own process span in the same trace, marked duplicate', async () => {
    const envelope = await writeInSpan();
    await relay().runOnce();
    await waitFor('handled', () => (runner.metrics().handled === 1 ? true : undefined));
    // The relay crashed after the confirm and before SENT: the same row is published again.
    await pg.pool.query(
      `UPDATE "${pg.schema}".outbox_event SET status = 'READY', sent_at = NULL WHERE event_id = $1`,
      [envelope.messageId],
    );
    await relay().runOnce();
    await waitFor('duplicate', () => (runner.metrics().duplicates === 1 ? true : undefined));
    await waitFor('two process spans', () =>
      spans.getFinishedSpans().filter((s) => s.name.endsWith('process')).length === 2
        ? true
        : undefined,
    );
    const processes = spans.getFinishedSpans().filter((s) => s.name.endsWith(' process'));
    expect(processes.map((s) => s.attributes['evgen.inbox.result']).sort()).toEqual([
      'duplicate',
      'handled',
    ]);
    const traceIds = new Set(spans.getFinishedSpans().map((s) => s.spanContext().traceId));
    expect(traceIds.size).toBe(1);
  });

  it('reports outbox backlog, relay and consumer counts as metrics', async () => {
    const registered = await registerEvgenMetrics({
      db,
      outbox: { schema: pg.schema },
      relays: [],
      consumers: [{ name: 'inventory-service', runner }],
    });
    try {
      expect(registered.enabled).toBe(true);
      const r = relay();
      const withRelay = await registerEvgenMetrics({ relays: [r] });
      await writeInSpan();
      await writeInSpan();
      const before = await collect();
      expect(before.get('evgen.outbox.rows|READY')).toBe(2);
      expect(before.get('evgen.outbox.oldest_unsent_age|')).toBeGreaterThanOrEqual(0);
      await r.runOnce();
      await waitFor('handled', () => (runner.metrics().handled === 2 ? true : undefined));
      const after = await collect();
      expect(after.get('evgen.outbox.rows|SENT')).toBe(2);
      expect(after.get('evgen.outbox.rows|READY')).toBe(0);
      expect(after.get('evgen.relay.published|')).toBe(2);
      expect(after.get('evgen.consumer.handled|inventory-service')).toBe(2);
      expect(after.get('evgen.consumer.dead_lettered|inventory-service')).toBe(0);
      withRelay.close();
    } finally {
      registered.close();
    }
  });
});

/** Collects once: `name|attribute values` → value. */
async function collect(): Promise<Map<string, number>> {
  const { resourceMetrics } = await metricReader.collect();
  const values = new Map<string, number>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        const label = Object.values(point.attributes).join('|');
        values.set(`${metric.descriptor.name}|${label}`, point.value as number);
      }
    }
  }
  return values;
}
