/**
 * `/livez` and `/readyz` over real runners, with real outages through the TCP fault proxy:
 * - a RabbitMQ consumer whose database is cut: its breaker opens, `/readyz` answers 503 naming
 *   it while `/livez` stays 200; the database back, `/readyz` is 200 again by itself — the same
 *   runner, never restarted — and every message was applied once;
 * - a RabbitMQ consumer whose broker connection is cut: 503 while it reconnects, 200 after;
 * - an outbox relay whose broker is cut: 503 (broker unreachable since …), backlog and oldest
 *   unsent age in the facts, 200 after and every row SENT;
 * - the same endpoints mounted on real Express and Fastify servers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  InProcessBroker,
  createAmqpConnector,
  createHealthEndpoints,
  createOutboxRelay,
  createRabbitMqConsumerRunner,
  createEnvelope,
  migrateInbox,
  migrateOutbox,
  outboxStats,
  postgresDatabase,
  publishEnvelope,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type ConsumerRunner,
  type Database,
  type HealthEndpoints,
  type OutboxRelay,
  type ResolvedTopology,
} from 'evgen/runtime';
import {
  ORDER_EVENT,
  checkEffects,
  createEffectsTable,
  effectConsumer,
} from '../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  createTestBroker,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

interface Answer {
  readonly status: number;
  readonly body: {
    status: string;
    runners: Record<
      string,
      { ready?: boolean; reasons?: string[]; facts?: Record<string, unknown>; state?: string }
    >;
  };
}

/** Serves `endpoints` with plain Node http on a free loopback port. */
async function serve(endpoints: HealthEndpoints): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => endpoints.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function get(url: string): Promise<Answer> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** Polls `path` until it answers `status`; returns that answer. */
async function until(
  base: string,
  path: string,
  status: number,
  timeoutMs = 30_000,
): Promise<Answer> {
  return waitFor(
    `${path} → ${status}`,
    async () => {
      const answer = await get(base + path);
      return answer.status === status ? answer : undefined;
    },
    timeoutMs,
  );
}

describe('health endpoints over real runners and real outages', () => {
  let broker: TestBroker;
  let test: TestSchema;
  let db: Database;
  let topology: ResolvedTopology;
  let publisher: ConfirmedPublisher;
  const proxies: FaultProxy[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  const versions = new Map<string, number>();
  const published = new Map<string, string>();

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200, 1_000] });
    test = await createTestSchema('evgen_health');
    db = postgresDatabase(test.pool);
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
    publisher = new ConfirmedPublisher(broker.connection);
    versions.clear();
    published.clear();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    for (const proxy of proxies.splice(0)) await proxy.close();
    await publisher.close();
    await broker.cleanup();
    await test.drop();
  });

  async function publishNext(orderId: string): Promise<void> {
    const next = (versions.get(orderId) ?? 0) + 1;
    versions.set(orderId, next);
    const envelope = createEnvelope(
      ORDER_EVENT,
      { orderId, seq: next },
      { aggregateVersion: next },
    );
    await publishEnvelope(
      publisher,
      envelope,
      { exchange: 'order', routingKey: 'order.created' },
      { prefix: broker.prefix },
    );
    published.set(envelope.messageId, orderId);
  }

  const effectCount = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${test.schema}".effects`))
        .rows[0]!.n,
    );

  async function proxy(targetPort: number): Promise<FaultProxy> {
    const started = await startFaultProxy({ targetPort });
    proxies.push(started);
    return started;
  }

  it('a consumer whose database is cut is not ready while its breaker is open, and ready again by itself', async () => {
    const dbProxy = await proxy(5432);
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${dbProxy.port}/test`,
      max: 4,
      connectionTimeoutMillis: 1_000,
    });
    pool.on('error', () => undefined);
    cleanups.push(() => pool.end());
    const runner: ConsumerRunner = createRabbitMqConsumerRunner({
      handler: effectConsumer(postgresDatabase(pool), test.schema),
      circuitBreaker: { backoff: { baseMs: 300, capMs: 1_000, jitter: 0 } },
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
      },
    });
    cleanups.push(() => runner.stop());
    const server = await serve(createHealthEndpoints({ runners: { inventory: runner } }));
    cleanups.push(() => server.close());

    // Not started: not ready, but alive.
    expect((await get(`${server.url}/readyz`)).status).toBe(503);
    expect((await get(`${server.url}/livez`)).status).toBe(200);
    await runner.start();
    const up = await get(`${server.url}/readyz`);
    expect(up.status).toBe(200);
    expect(up.body.runners.inventory).toMatchObject({
      ready: true,
      facts: { state: 'running', breakerOpen: false },
    });

    for (let k = 0; k < 10; k++) await publishNext(`agg-${k % 3}`);
    await waitFor('10 effects', async () => ((await effectCount()) === 10 ? true : undefined));
    await dbProxy.refuse();
    dbProxy.dropAll();
    for (let k = 0; k < 10; k++) await publishNext(`agg-${k % 3}`);
    const down = await until(server.url, '/readyz', 503);
    expect(down.body.status).toBe('down');
    expect(down.body.runners.inventory!.facts).toMatchObject({
      state: 'running',
      breakerOpen: true,
    });
    expect(down.body.runners.inventory!.facts!.breakerOpenSince).toEqual(expect.any(String));
    expect(down.body.runners.inventory!.reasons!.join()).toMatch(/circuit breaker open/);
    // Liveness does not follow the outage.
    const live = await get(`${server.url}/livez`);
    expect(live).toMatchObject({
      status: 200,
      body: { status: 'up', runners: { inventory: { state: 'running' } } },
    });

    await dbProxy.restore();
    const back = await until(server.url, '/readyz', 200);
    expect(back.body.runners.inventory).toMatchObject({
      ready: true,
      facts: { breakerOpen: false },
    });
    await waitFor(
      '20 effects',
      async () => ((await effectCount()) === 20 ? true : undefined),
      60_000,
    );
    expect(await checkEffects(db, test.schema, published)).toEqual({
      effects: 20,
      lost: [],
      doubled: [],
      outOfOrder: [],
    });
    // Back by itself: never stopped, and no channel restart was needed for a database outage.
    expect(runner.state).toBe('running');
    expect(runner.metrics()).toMatchObject({ restarts: 0, deadLettered: 0, retried: 0 });
    expect(runner.metrics().pauses).toBeGreaterThanOrEqual(1);
  });

  it('a consumer whose broker connection is cut is not ready while it reconnects, ready again after', async () => {
    const amqpProxy = await proxy(5672);
    const connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL.replace('127.0.0.1:5672', `127.0.0.1:${amqpProxy.port}`),
      backoff: { baseMs: 200, capMs: 500, jitter: 0 },
    });
    cleanups.push(() => connector.close());
    const runner = createRabbitMqConsumerRunner({
      handler: effectConsumer(db, test.schema),
      rabbitmq: {
        connection: connector,
        routes: topology.consumers['inventory-service']!,
        reconnectBackoff: { baseMs: 200, capMs: 500, jitter: 0 },
      },
    });
    cleanups.push(() => runner.stop());
    const server = await serve(createHealthEndpoints({ runners: { inventory: runner } }));
    cleanups.push(() => server.close());
    await runner.start();
    expect((await get(`${server.url}/readyz`)).status).toBe(200);

    await amqpProxy.refuse();
    amqpProxy.dropAll();
    const down = await until(server.url, '/readyz', 503);
    expect(down.body.runners.inventory!.facts!.brokerDisconnectedSince).toEqual(expect.any(String));
    expect((await get(`${server.url}/livez`)).status).toBe(200);
    await publishNext('after-cut');

    await amqpProxy.restore();
    await until(server.url, '/readyz', 200);
    await waitFor('the message sent during the cut applied', async () =>
      (await effectCount()) === 1 ? true : undefined,
    );
    expect(runner.state).toBe('running');
    expect(runner.metrics().restarts).toBeGreaterThanOrEqual(1);
  });

  it('a relay whose broker is cut is not ready, reports its backlog, and is ready again with every row sent', async () => {
    await migrateOutbox(db, { schema: test.schema });
    const amqpProxy = await proxy(5672);
    const connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL.replace('127.0.0.1:5672', `127.0.0.1:${amqpProxy.port}`),
      backoff: { baseMs: 200, capMs: 500, jitter: 0 },
    });
    cleanups.push(() => connector.close());
    const relayPublisher = new ConfirmedPublisher(connector, { confirmTimeoutMs: 2_000 });
    cleanups.push(() => relayPublisher.close());
    const relay: OutboxRelay = createOutboxRelay({
      db,
      schema: test.schema,
      publisher: rabbitRelayPublisher(
        relayPublisher,
        { [ORDER_EVENT.eventType]: { exchange: 'order', routingKey: 'order.created' } },
        { prefix: broker.prefix },
      ),
      notifyChannel: false,
      pollIntervalMs: 100,
      unavailableBackoff: { baseMs: 200, capMs: 1_000, jitter: 0 },
    });
    cleanups.push(() => relay.stop());
    const server = await serve(createHealthEndpoints({ runners: { relay } }));
    cleanups.push(() => server.close());
    await relay.start();
    const write = (orderId: string) =>
      db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          ORDER_EVENT,
          { orderId, seq: 1 },
          {},
          { schema: test.schema, notifyChannel: false },
        ),
      );

    await write('before');
    const up = await until(server.url, '/readyz', 200);
    expect(up.body.runners.relay).toMatchObject({
      ready: true,
      facts: { databaseReachable: true, deadRows: 0 },
    });

    await amqpProxy.refuse();
    amqpProxy.dropAll();
    for (let k = 0; k < 5; k++) await write(`during-${k}`);
    const down = await until(server.url, '/readyz', 503);
    const facts = down.body.runners.relay!.facts!;
    expect(facts.brokerDisconnectedSince).toEqual(expect.any(String));
    expect(facts.outboxBacklog).toBeGreaterThanOrEqual(1);
    expect(facts.oldestUnsentAgeMs).toEqual(expect.any(Number));
    expect((await get(`${server.url}/livez`)).status).toBe(200);

    await amqpProxy.restore();
    const back = await until(server.url, '/readyz', 200, 60_000);
    expect(back.body.runners.relay!.facts).toMatchObject({ state: 'running' });
    await waitFor(
      'every row sent',
      async () => {
        const stats = await outboxStats(db, { schema: test.schema });
        return stats.sent === 6 ? true : undefined;
      },
      60_000,
    );
    expect(relay.state).toBe('running');
    expect(relay.metrics().dead).toBe(0);
  });

  it('mounts on Express (middleware) and Fastify (routes) with the same answers', async () => {
    const inProcess = new InProcessBroker({
      inProcess: {
        autoStart: false,
      },
    });
    cleanups.push(async () => inProcess.close());
    const endpoints = createHealthEndpoints({ runners: { orders: inProcess } });

    const app = express();
    app.use(endpoints.handle);
    app.get('/other', (_req, res) => {
      res.send('other route');
    });
    const expressServer = await new Promise<http.Server>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(server));
    });
    cleanups.push(() => new Promise((resolve) => expressServer.close(resolve)));
    const expressUrl = `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}`;

    const fastify = Fastify();
    endpoints.register(fastify);
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => fastify.close());
    const fastifyUrl = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;

    for (const url of [expressUrl, fastifyUrl]) {
      const notReady = await get(`${url}/readyz`);
      expect(notReady.status).toBe(503);
      expect(notReady.body.runners.orders).toMatchObject({
        ready: false,
        reasons: ['runner is new'],
      });
      expect((await get(`${url}/livez`)).status).toBe(200);
    }
    // Express hands other paths on.
    expect(await (await fetch(`${expressUrl}/other`)).text()).toBe('other route');
    await inProcess.start();
    for (const url of [expressUrl, fastifyUrl]) {
      const ready = await get(`${url}/readyz`);
      expect(ready).toMatchObject({
        status: 200,
        body: { status: 'up', runners: { orders: { ready: true } } },
      });
    }
    await inProcess.stop();
    expect((await get(`${fastifyUrl}/readyz`)).status).toBe(503);
    expect((await get(`${expressUrl}/livez`)).status).toBe(200);
  });
});
