/**
 * A relay in a process with `@opentelemetry/api` installed (other packages bring it) but no SDK:
 * the trace context a traced writer stored with the row reaches the broker unchanged, so the
 * consumer still continues the writer's trace. Real PostgreSQL and RabbitMQ. Each test registers
 * what it names (a propagator, a tracer provider) and removes it afterwards.
 */
import { randomUUID } from 'node:crypto';
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createOutboxRelay,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Database,
  type ResolvedTopology,
} from 'evgen/runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  createTestBroker,
  drainQueue,
  SAMPLE_ORDER_CREATED,
  SAMPLE_TOPOLOGY,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

/** What a traced writer stores: a sampled W3C context and vendor state. */
const STORED = {
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'vendor=abc',
};

describe('the relay without an OpenTelemetry SDK (real PostgreSQL and RabbitMQ)', () => {
  let pg: TestSchema;
  let db: Database;
  let broker: TestBroker;
  let topology: ResolvedTopology;
  let confirmed: ConfirmedPublisher;

  beforeEach(async () => {
    pg = await createTestSchema('evgen_otel_off');
    db = postgresDatabase(pg.pool);
    await migrateOutbox(db, { schema: pg.schema });
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [100] });
    confirmed = new ConfirmedPublisher(broker.connection);
  });

  afterEach(async () => {
    propagation.disable();
    trace.disable();
    await confirmed.close();
    await broker.cleanup();
    await pg.drop();
  });

  /** Writes one event with the stored context, relays it, and returns the headers it arrived with. */
  async function relayedHeaders(): Promise<Record<string, unknown>> {
    const envelope = await db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        SAMPLE_ORDER_CREATED,
        { orderId: randomUUID() },
        { headers: STORED },
        { schema: pg.schema, notifyChannel: false },
      ),
    );
    const relay = createOutboxRelay({
      db,
      schema: pg.schema,
      notifyChannel: false,
      publisher: rabbitRelayPublisher(
        confirmed,
        { 'order.OrderCreated': { exchange: 'order', routingKey: 'order.created' } },
        { prefix: broker.prefix },
      ),
    });
    expect(await relay.runOnce()).toMatchObject({ published: 1 });
    const queue = topology.consumers['inventory-service']!.queue;
    const [message] = await waitFor('the relayed message', async () => {
      const messages = await drainQueue(broker.channel, queue);
      return messages.length > 0 ? messages : undefined;
    });
    expect(message!.properties.messageId).toBe(envelope.messageId);
    return message!.properties.headers ?? {};
  }

  it('with nothing registered, the stored traceparent and tracestate are sent as they are', async () => {
    const headers = await relayedHeaders();
    expect(headers).toMatchObject(STORED);
  });

  it('with a propagator but no tracer provider, the stored trace is still the one sent', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const headers = await relayedHeaders();
    // The publish span records nothing; the context it carries is the stored one.
    expect(headers).toMatchObject(STORED);
  });

  it('with a tracer provider but no propagator, the publish span is recorded and the stored trace sent', async () => {
    const spans = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    trace.setGlobalTracerProvider(provider);
    try {
      const headers = await relayedHeaders();
      // No propagator can write the publish span's context, so the writer's goes on instead.
      expect(headers).toMatchObject(STORED);
      expect(spans.getFinishedSpans().map((span) => span.name)).toEqual([
        'order.OrderCreated publish',
      ]);
      expect(spans.getFinishedSpans()[0]!.parentSpanContext).toBeUndefined();
    } finally {
      await provider.shutdown();
    }
  });
});
