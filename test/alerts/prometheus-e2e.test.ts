/**
 * End to end with a real Prometheus (the machine's, from its package manager): it scrapes the
 * `/metrics` of a real relay and consumer and evaluates the rules `evgen alerts` generated from
 * the repository's catalog (outbox age threshold 2 s, held 3 s). The broker cut through the fault
 * proxy → rows stay unsent → EvgenOutboxOldestUnsentAgeHigh goes pending, then firing; the broker
 * back → every row is sent and the alert resolves. Bounded: every wait has a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createAmqpConnector,
  createHealthEndpoints,
  createOutboxRelay,
  createPrometheusMetrics,
  createRabbitMqConsumerRunner,
  migrateInbox,
  migrateOutbox,
  outboxStats,
  postgresDatabase,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Database,
} from 'evgen/runtime';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { alertGroups, renderAlertRules } from '../../src/codegen/alerts/alert-rules.js';
import { resolveThresholds } from '../../src/codegen/alerts/alert-thresholds.js';
import { ORDER_EVENT, createEffectsTable, effectConsumer } from '../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  createTestBroker,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

const REPO = resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

interface PromAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

describe('a real Prometheus evaluating the generated rules against a real relay', () => {
  let broker: TestBroker;
  let test: TestSchema;
  let db: Database;
  let dir: string;
  let prometheus: ChildProcess | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    broker = await createTestBroker();
    test = await createTestSchema('evgen_prom_e2e');
    db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
    dir = await mkdtemp(join(tmpdir(), 'evgen-prometheus-'));
  });

  afterEach(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await new Promise((done) => prometheus!.once('exit', done));
    }
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await broker.cleanup();
    await test.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the outbox-age alert goes pending and firing while the broker is cut, and resolves when it is back', async () => {
    const topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200] });
    const amqpProxy: FaultProxy = await startFaultProxy({ targetPort: 5672 });
    cleanups.push(() => amqpProxy.close());
    const connector = createAmqpConnector({
      url: TEST_RABBITMQ_URL.replace('127.0.0.1:5672', `127.0.0.1:${amqpProxy.port}`),
      backoff: { baseMs: 200, capMs: 500, jitter: 0 },
    });
    cleanups.push(() => connector.close());
    const publisher = new ConfirmedPublisher(connector, { confirmTimeoutMs: 2_000 });
    cleanups.push(() => publisher.close());

    const metrics = createPrometheusMetrics();
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
        unavailableBackoff: { baseMs: 200, capMs: 1_000, jitter: 0 },
      }),
    );
    metrics.watchRelay(relay);
    cleanups.push(() => relay.stop());
    const consumer = createRabbitMqConsumerRunner({
      handler: metrics.instrumentHandler(effectConsumer(db, test.schema), 'inventory-service'),
      onEvent: metrics.consumerEvents('inventory-service'),
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
      },
    });
    metrics.watchConsumer('inventory-service', consumer);
    cleanups.push(() => consumer.stop());
    const endpoints = createHealthEndpoints({
      runners: { relay, 'inventory-service': consumer },
      metrics,
    });
    const server = http.createServer((req, res) => endpoints.handle(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => server.close(done)));
    const metricsPort = (server.address() as AddressInfo).port;
    await consumer.start();
    await relay.start();

    // The rules, generated from the repository's catalog with a short outbox-age threshold.
    const catalog = await loadCatalog(join(REPO, 'events'));
    const thresholds = resolveThresholds(
      catalog,
      {
        defaults: {
          outboxOldestUnsentAgeSeconds: {
            warning: 2,
            critical: 3_600,
            warningFor: '3s',
            criticalFor: '1m',
          },
        },
      },
      '_alerts.json',
    );
    await writeFile(join(dir, 'rules.yml'), renderAlertRules(alertGroups(catalog, thresholds)));
    await writeFile(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        '  - rules.yml',
        'scrape_configs:',
        '  - job_name: evgen',
        '    static_configs:',
        `      - targets: ["127.0.0.1:${metricsPort}"]`,
        '',
      ].join('\n'),
    );
    const promPort = await freePort();
    let log = '';
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stderr!.on(
      'data',
      (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4_000)),
    );
    // A missing binary fails the test at once, saying so, not after the first wait times out.
    const spawnFailed = new Promise<never>((_, reject) =>
      prometheus!.once('error', (error) =>
        reject(
          new Error(
            `prometheus could not be started (.ci/run installs it: apt-get install prometheus): ${error.message}`,
          ),
        ),
      ),
    );
    spawnFailed.catch(() => undefined);
    const api = async (path: string): Promise<unknown> => {
      const response = await fetch(`http://127.0.0.1:${promPort}${path}`);
      return ((await response.json()) as { data: unknown }).data;
    };
    const query = async (promql: string) =>
      (await api(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as {
        result: { metric: Record<string, string>; value: [number, string] }[];
      };
    const outboxAlerts = async () =>
      ((await api('/api/v1/alerts')) as { alerts: PromAlert[] }).alerts.filter(
        (a) => a.labels.alertname === 'EvgenOutboxOldestUnsentAgeHigh',
      );
    const within = <T>(what: string, check: () => Promise<T | undefined>, ms: number) =>
      Promise.race([
        waitFor(what, () => check().catch(() => undefined), ms).catch((error: unknown) => {
          throw new Error(`${(error as Error).message}\nprometheus log:\n${log}`);
        }),
        spawnFailed,
      ]);

    // Prometheus scrapes the relay and the consumer; with the broker up nothing fires.
    const write = (orderId: string) =>
      db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          ORDER_EVENT,
          { orderId, seq: 1 },
          { aggregateVersion: 1 },
          { schema: test.schema, notifyChannel: false },
        ),
      );
    await write('before-cut');
    await within(
      'Prometheus to have scraped the consumer handling the first row',
      async () => {
        const handled = await query('evgen_consumer_handled_total{consumer="inventory-service"}');
        return handled.result.some((r) => r.value[1] === '1') ? true : undefined;
      },
      60_000,
    );
    const up = await query('evgen_runner_ready');
    expect(up.result.map((r) => [r.metric.runner, r.value[1]]).sort()).toEqual([
      ['inventory-service', '1'],
      ['relay', '1'],
    ]);
    expect(await outboxAlerts()).toEqual([]);

    // The broker cut: rows wait, their age passes 2 s, the alert goes pending, then fires (3 s).
    await amqpProxy.refuse();
    amqpProxy.dropAll();
    for (let k = 0; k < 3; k++) await write(`during-cut-${k}`);
    const pending = await within(
      'EvgenOutboxOldestUnsentAgeHigh pending',
      async () => {
        const alerts = await outboxAlerts();
        return alerts.length > 0 ? alerts : undefined;
      },
      60_000,
    );
    expect(pending[0]!.labels).toMatchObject({ severity: 'warning', relay: 'relay' });
    await within(
      'EvgenOutboxOldestUnsentAgeHigh firing',
      async () => ((await outboxAlerts()).some((a) => a.state === 'firing') ? true : undefined),
      30_000,
    );

    // The broker back: every row sent, the age back to 0, the alert gone.
    await amqpProxy.restore();
    await within(
      'every row sent',
      async () => ((await outboxStats(db, { schema: test.schema })).sent === 4 ? true : undefined),
      60_000,
    );
    await within(
      'EvgenOutboxOldestUnsentAgeHigh resolved',
      async () => ((await outboxAlerts()).length === 0 ? true : undefined),
      60_000,
    );
    await within(
      'Prometheus to have scraped every message handled',
      async () => {
        const handled = await query('evgen_consumer_handled_total{consumer="inventory-service"}');
        return handled.result.some((r) => r.value[1] === '4') ? true : undefined;
      },
      60_000,
    );
  });
});
