/**
 * `/metrics` scraped over HTTP from a real service run: events written to a PostgreSQL outbox,
 * published to RabbitMQ by the relay, handled by an inbox consumer; the numbers read back from the
 * Prometheus text must be the ones the run produced (published, handled, duplicate, dead-lettered,
 * backlog back to 0, one processing-time observation per message). Then the label cap: event
 * types beyond `maxEventTypes` are counted under `other`, never as new series.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  OTHER_LABEL_VALUE,
  createEnvelope,
  createHealthEndpoints,
  createOutboxRelay,
  createPrometheusMetrics,
  createRabbitMqConsumerRunner,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  publishEnvelope,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Database,
  type HealthEndpoints,
  type MessageHandler,
} from 'evgen/runtime';
import { ORDER_EVENT, createEffectsTable, effectConsumer } from '../support/effect-oracle.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  SAMPLE_TOPOLOGY,
  createTestBroker,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';
import { parsePrometheusText, samplesOf, valueOf, type Sample } from './support/prometheus-text.js';

async function serve(endpoints: HealthEndpoints): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => endpoints.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function scrape(
  url: string,
): Promise<{ contentType: string; samples: Sample[]; text: string }> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  return {
    contentType: response.headers.get('content-type') ?? '',
    samples: parsePrometheusText(text),
    text,
  };
}

describe('Prometheus metrics from a real relay and consumer', () => {
  let broker: TestBroker;
  let test: TestSchema;
  let db: Database;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    broker = await createTestBroker();
    test = await createTestSchema('evgen_prom');
    db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await broker.cleanup();
    await test.drop();
  });

  it('reports what the run did: published, handled, duplicate, dead-lettered, backlog and processing time', async () => {
    const topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200] });
    const metrics = createPrometheusMetrics();
    const publisher = new ConfirmedPublisher(broker.connection);
    cleanups.push(() => publisher.close());
    const relay = createOutboxRelay(
      metrics.instrumentRelay({
        db,
        schema: test.schema,
        publisher: rabbitRelayPublisher(
          publisher,
          { [ORDER_EVENT.eventType]: { exchange: 'order', routingKey: 'order.created' } },
          { prefix: broker.prefix },
        ),
        notifyChannel: false,
        pollIntervalMs: 100,
      }),
    );
    metrics.watchRelay(relay);
    cleanups.push(() => relay.stop());
    const runner = createRabbitMqConsumerRunner({
      handler: metrics.instrumentHandler(
        effectConsumer(db, test.schema, 'inventory-service', (p) => p.orderId === 'poison', {
          ordered: false,
        }),
        'inventory',
      ),
      classify: (error) => (/poison/.test(String(error)) ? 'non-retryable' : undefined),
      onEvent: metrics.consumerEvents('inventory'),
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
      },
    });
    metrics.watchConsumer('inventory', runner);
    cleanups.push(() => runner.stop());
    const server = await serve(
      createHealthEndpoints({ runners: { relay, inventory: runner }, metrics }),
    );
    cleanups.push(() => server.close());

    // Before anything ran: series exist, runners not ready.
    const before = await scrape(server.url);
    expect(before.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(valueOf(before.samples, 'evgen_runner_ready', { runner: 'relay' })).toBe(0);
    expect(valueOf(before.samples, 'evgen_consumer_handled_total', { consumer: 'inventory' })).toBe(
      0,
    );

    await runner.start();
    await relay.start();
    for (let k = 0; k < 10; k++)
      await db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          ORDER_EVENT,
          { orderId: `o-${k}`, seq: 1 },
          { aggregateVersion: 1 },
          { schema: test.schema, notifyChannel: false },
        ),
      );
    await db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        ORDER_EVENT,
        { orderId: 'poison', seq: 1 },
        { aggregateVersion: 1 },
        { schema: test.schema, notifyChannel: false },
      ),
    );
    // One envelope published twice past the outbox: the inbox's duplicate.
    const twice = createEnvelope(
      ORDER_EVENT,
      { orderId: 'twice', seq: 1 },
      { aggregateVersion: 1 },
    );
    for (let k = 0; k < 2; k++)
      await publishEnvelope(
        publisher,
        twice,
        { exchange: 'order', routingKey: 'order.created' },
        { prefix: broker.prefix },
      );

    let last = '';
    const after = await waitFor(
      'every message settled in the scraped numbers',
      async () => {
        const read = await scrape(server.url);
        last = read.text;
        const handled = valueOf(read.samples, 'evgen_consumer_handled_total', {
          consumer: 'inventory',
        });
        const dead = valueOf(read.samples, 'evgen_consumer_dead_lettered_total', {
          consumer: 'inventory',
        });
        const backlog = valueOf(read.samples, 'evgen_outbox_backlog_rows', { relay: 'relay' });
        return handled === 12 && dead === 1 && backlog === 0 ? read : undefined;
      },
      30_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; last scrape:\n${last}`);
    });
    const s = after.samples;
    expect(valueOf(s, 'evgen_relay_published_total', { relay: 'relay' })).toBe(11);
    expect(valueOf(s, 'evgen_relay_publish_failures_total', { relay: 'relay' })).toBe(0);
    expect(valueOf(s, 'evgen_relay_dead_total', { relay: 'relay' })).toBe(0);
    expect(valueOf(s, 'evgen_outbox_oldest_unsent_age_seconds', { relay: 'relay' })).toBe(0);
    expect(valueOf(s, 'evgen_outbox_dead_rows', { relay: 'relay' })).toBe(0);
    expect(valueOf(s, 'evgen_consumer_duplicates_total', { consumer: 'inventory' })).toBe(1);
    expect(valueOf(s, 'evgen_consumer_retried_total', { consumer: 'inventory' })).toBe(0);
    expect(valueOf(s, 'evgen_runner_ready', { runner: 'relay' })).toBe(1);
    expect(valueOf(s, 'evgen_runner_ready', { runner: 'inventory' })).toBe(1);
    expect(valueOf(s, 'evgen_runner_broker_connected', { runner: 'inventory' })).toBe(1);
    expect(valueOf(s, 'evgen_consumer_breaker_open', { consumer: 'inventory' })).toBe(0);
    // Histograms: one observation per publish and per handler run, by event type and outcome.
    const type = { event_type: 'order.OrderCreated' };
    expect(
      valueOf(s, 'evgen_relay_publish_duration_seconds_count', { ...type, outcome: 'confirmed' }),
    ).toBe(11);
    expect(valueOf(s, 'evgen_outbox_delivery_delay_seconds_count', type)).toBe(11);
    const processed = (outcome: string) =>
      valueOf(s, 'evgen_consumer_processing_seconds_count', {
        consumer: 'inventory',
        ...type,
        outcome,
      });
    expect(processed('handled')).toBe(11);
    expect(processed('duplicate')).toBe(1);
    expect(processed('failed')).toBe(1);
    const inf = samplesOf(s, 'evgen_consumer_processing_seconds_bucket', {
      ...type,
      outcome: 'handled',
      le: '+Inf',
    });
    expect(inf.map((x) => x.value)).toEqual([11]);
    expect(
      valueOf(s, 'evgen_consumer_processing_seconds_sum', { ...type, outcome: 'handled' }),
    ).toBeGreaterThan(0);
    // No per-message label anywhere: no messageId (a UUID) and no aggregate id in the text.
    expect(after.text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/);
    expect(after.text).not.toContain('o-1');
    expect(new Set(s.flatMap((x) => Object.keys(x.labels)))).toEqual(
      new Set(['runner', 'relay', 'consumer', 'event_type', 'outcome', 'le']),
    );
  });

  it('caps event-type labels: beyond maxEventTypes they count as other', async () => {
    const metrics = createPrometheusMetrics({ maxEventTypes: 100 });
    const handler: MessageHandler = {
      name: 'capped',
      handle: async (raw) =>
        (raw as { eventType: string }).eventType.endsWith('7') ? 'duplicate' : 'handled',
    };
    const timed = metrics.instrumentHandler(handler);
    for (let k = 0; k < 150; k++) await timed.handle({ eventType: `type.T${k}` });
    for (let k = 0; k < 3; k++) await timed.handle({ eventType: 'type.T5' }); // kept: seen first
    const s = parsePrometheusText(await metrics.text());
    const counts = samplesOf(s, 'evgen_consumer_processing_seconds_count', { consumer: 'capped' });
    const types = new Set(counts.map((x) => x.labels.event_type));
    expect(types.size).toBe(101);
    expect(types.has(OTHER_LABEL_VALUE)).toBe(true);
    expect(types.has('type.T99')).toBe(true);
    expect(types.has('type.T100')).toBe(false);
    expect(
      valueOf(s, 'evgen_consumer_processing_seconds_count', { event_type: OTHER_LABEL_VALUE }),
    ).toBe(50);
    expect(valueOf(s, 'evgen_consumer_processing_seconds_count', { event_type: 'type.T5' })).toBe(
      4,
    );
    expect(() => createPrometheusMetrics({ maxEventTypes: 0 })).toThrow(/positive integer/);
  });

  it('counts runner events and reports only the Kafka partitions a member owns', async () => {
    const metrics = createPrometheusMetrics();
    const seen: string[] = [];
    const onEvent = metrics.consumerEvents<{ type: string }>('billing', (event) =>
      seen.push(event.type),
    );
    for (const type of [
      'assigned',
      'revoked',
      'assigned',
      'commit-failed',
      'paused',
      'resumed',
      'handled',
    ])
      onEvent({ type });
    metrics.watchConsumer('billing', {
      health: async () => ({
        status: 'up',
        ready: true,
        live: true,
        reasons: [],
        facts: { state: 'running', inFlight: 0, breakerOpen: false, partitionsAssigned: 2 },
      }),
      metrics: () => ({ handled: 5, duplicates: 0, skipped: 0, retried: 2, deadLettered: 0 }),
      lag: async () => [
        { topic: 'orders', partition: 0, lag: 3, assigned: true },
        { topic: 'orders', partition: 1, lag: 9, assigned: false },
        { topic: 'orders.retry.1000', partition: 0, lag: 4, assigned: true },
      ],
    });
    const s = parsePrometheusText(await metrics.text());
    expect(seen).toHaveLength(7);
    expect(valueOf(s, 'evgen_consumer_rebalances_total', { consumer: 'billing' })).toBe(2);
    expect(valueOf(s, 'evgen_consumer_commit_failures_total', { consumer: 'billing' })).toBe(1);
    expect(valueOf(s, 'evgen_consumer_breaker_opened_total', { consumer: 'billing' })).toBe(1);
    expect(valueOf(s, 'evgen_consumer_partitions_assigned', { consumer: 'billing' })).toBe(2);
    expect(valueOf(s, 'evgen_consumer_retried_total', { consumer: 'billing' })).toBe(2);
    expect(
      samplesOf(s, 'evgen_consumer_lag_records').map((x) => [
        x.labels.topic,
        x.labels.partition,
        x.value,
      ]),
    ).toEqual([
      ['orders', '0', 3],
      ['orders.retry.1000', '0', 4],
    ]);
  });
});
