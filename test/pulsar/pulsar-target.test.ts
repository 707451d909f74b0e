/**
 * The `pulsar` target: what the Pulsar-only golden catalog (test/golden/pulsar-only) gets and what
 * the other catalogs do not, dependency events without publishers, and — on the real broker — that
 * the committed generated `ensurePulsarTopics` creates the declared topics (partitioned as
 * declared, with the deployment prefix) and a generated publish helper sends key = aggregateId,
 * the envelope JSON and its ids as properties, read back with the WebSocket consumer.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load-catalog.js';
import { allTargets } from '../../src/codegen/targets/index.js';
import { pulsarTarget } from '../../src/codegen/targets/pulsar.js';
import {
  createPulsarProducers,
  pulsarWebSocketClient,
  type PulsarInboundMessage,
} from 'evgen/runtime';
import { caseEventsDir, expectedDir, listFiles, readExpected } from '../golden/golden-support.js';
import {
  pulsarRoutes,
  publishPaymentCaptured,
} from '../golden/pulsar-only/expected/pulsar/publishers.js';
import {
  ensurePulsarTopics,
  pulsarTopology,
} from '../golden/pulsar-only/expected/pulsar/topology.js';
import { paymentCapturedV1 } from '../golden/pulsar-only/expected/payment/payment-captured/envelope.js';
import { runTarget } from '../support/run-target.js';
import { createTestPulsar, waitFor, type TestPulsar } from '../support/pulsar/test-pulsar.js';

describe('pulsar target output', () => {
  it('a Pulsar-only catalog gets pulsar/ and nothing of the other brokers; the others get no pulsar/', () => {
    const own = listFiles(expectedDir('pulsar-only'));
    expect(own.filter((file) => file.startsWith('pulsar/'))).toEqual([
      'pulsar/publishers.ts',
      'pulsar/topology.ts',
    ]);
    expect(own.filter((file) => /^(kafka|rabbitmq)\//.test(file))).toEqual([]);
    for (const other of ['kafka-only', 'rabbitmq-only', 'example'])
      expect(listFiles(expectedDir(other)).filter((file) => file.startsWith('pulsar/'))).toEqual(
        [],
      );
    expect(allTargets).toContain(pulsarTarget);
  });

  it('writes tenant and namespace out, partitions only where declared, one entry per topic', () => {
    expect(pulsarTopology.topics).toEqual([
      { tenant: 'public', namespace: 'default', topic: 'payment.events', partitions: 2 },
      { tenant: 'public', namespace: 'payments', topic: 'payment.refunds' },
    ]);
    expect(pulsarRoutes).toEqual({
      'payment.PaymentCaptured': {
        tenant: 'public',
        namespace: 'default',
        topic: 'payment.events',
      },
      'payment.PaymentRefunded': {
        tenant: 'public',
        namespace: 'payments',
        topic: 'payment.refunds',
      },
    });
    expect(
      pulsarTopology.consumers.map((c) => [c.name, c.subscriptions.map((s) => s.eventType)]),
    ).toEqual([['ledger-service', ['payment.PaymentCaptured', 'payment.PaymentRefunded']]]);
  });

  it('a dependency catalog gets the topology but no publishers; no Pulsar event, no file', async () => {
    const catalog = await loadCatalog(caseEventsDir('pulsar-only'));
    const context = { catalog, runtimeImport: 'evgen-runtime' };
    const own = await runTarget(pulsarTarget, context);
    expect(own.map((file) => file.path)).toEqual(['pulsar/publishers.ts', 'pulsar/topology.ts']);
    for (const file of own) expect(file.content).toBe(readExpected('pulsar-only', file.path));
    const dependency = {
      ...catalog,
      events: catalog.events.map((event) => ({
        ...event,
        dependency: { name: 'payments', root: '/elsewhere' },
      })),
    };
    const read = await runTarget(pulsarTarget, { ...context, catalog: dependency });
    expect(read.map((file) => file.path)).toEqual(['pulsar/topology.ts']);
    expect(read[0]!.content).toBe(own[1]!.content);
    const withoutPulsar = {
      ...catalog,
      events: catalog.events.map(({ pulsar: _pulsar, ...event }) => event),
    };
    expect(await runTarget(pulsarTarget, { ...context, catalog: withoutPulsar })).toEqual([]);
  });
});

describe('generated Pulsar code on the real broker', () => {
  let pulsar: TestPulsar | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await pulsar?.cleanup();
  });

  it('ensurePulsarTopics creates the prefixed topics as declared; a publish helper sends key, properties and payload', async () => {
    pulsar = await createTestPulsar();
    const test = pulsar;
    const prefix = `evgen-t-${randomBytes(4).toString('hex')}-`;
    const connection = { webServiceUrl: test.webUrl };
    const events = `persistent://public/default/${prefix}payment.events`;
    const refunds = `persistent://public/payments/${prefix}payment.refunds`;
    cleanups.push(async () => {
      for (const topic of [events, refunds]) {
        const path = topic.replace('://', '/');
        await test
          .admin('DELETE', `${path}/partitions?force=true`)
          .catch(() => test.admin('DELETE', `${path}?force=true`))
          .catch(() => undefined);
      }
    });
    const result = await ensurePulsarTopics(connection, { prefix });
    // The namespace `payments` may be there from an earlier run; the topics are new.
    if (result.createdNamespaces.length > 0) {
      expect(result.createdNamespaces).toEqual(['public/payments']);
      cleanups.unshift(() =>
        test.admin('DELETE', 'namespaces/public/payments?force=true').catch(() => undefined),
      );
    }
    expect(result).toMatchObject({ createdTopics: [events, refunds], conflicts: [] });
    expect(
      await test.admin('GET', `persistent/public/default/${prefix}payment.events/partitions`),
    ).toMatchObject({
      partitions: 2,
    });
    expect(await test.admin('GET', 'persistent/public/payments')).toContain(refunds);
    expect(await ensurePulsarTopics(connection, { prefix })).toEqual({
      createdNamespaces: [],
      createdTopics: [],
      conflicts: [],
    });

    const client = pulsarWebSocketClient(connection);
    const consumer = client.consumer({ topics: [events], subscription: 'read-back' });
    const received: PulsarInboundMessage[] = [];
    await consumer.start({
      onMessage(message) {
        received.push(message);
        consumer.ack(message);
      },
    });
    cleanups.push(() => consumer.close());
    const producers = createPulsarProducers(client);
    cleanups.push(() => producers.close());
    const paymentId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const envelope = paymentCapturedV1(
      { paymentId, amountCents: 1250, currency: 'EUR' },
      { correlationId: 'checkout-7' },
    );
    const id = await publishPaymentCaptured(producers, envelope, { prefix });
    expect(id.length).toBeGreaterThan(0);
    const [message] = await waitFor('the published message', () =>
      received.length > 0 ? received : undefined,
    );
    expect(message!.key).toBe(paymentId);
    expect(JSON.parse(message!.payload.toString('utf8'))).toEqual(envelope);
    expect(message!.properties).toMatchObject({
      messageId: envelope.messageId,
      eventType: 'payment.PaymentCaptured',
      schemaVersion: '1',
      aggregateId: paymentId,
      correlationId: 'checkout-7',
    });
  });
});
