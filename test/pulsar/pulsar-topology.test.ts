/**
 * ensurePulsarTopics and publishPulsarEnvelope on the real broker: namespaces and topics
 * (partitioned and not) are created once, an existing topic partitioned otherwise is reported and
 * left as it is, a missing tenant is a clear error; a published envelope arrives keyed by its
 * aggregateId with the envelope's ids as properties under Kafka's header names.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/runtime/envelope.js';
import {
  PulsarClientError,
  type PulsarInboundMessage,
} from '../../src/runtime/pulsar/pulsar-client.js';
import {
  createPulsarProducers,
  publishPulsarEnvelope,
  pulsarRouteTopic,
} from '../../src/runtime/pulsar/pulsar-publishing.js';
import { ensurePulsarTopics } from '../../src/runtime/pulsar/pulsar-topology.js';
import { pulsarWebSocketClient } from '../../src/runtime/pulsar/websocket-client.js';
import { createTestPulsar, type TestPulsar, waitFor } from '../support/pulsar/test-pulsar.js';

let pulsar: TestPulsar;
let namespace: string;

beforeEach(async () => {
  pulsar = await createTestPulsar();
  namespace = `evgen-t-${randomBytes(4).toString('hex')}`;
});

afterEach(async () => {
  await pulsar.cleanup();
  // Deletes the test's namespace with every topic in it; absent when the test never created it.
  await pulsar
    .admin('DELETE', `namespaces/public/${namespace}?force=true`)
    .catch((error: unknown) => {
      if (!String(error).includes('HTTP 404')) throw error;
    });
});

describe('ensurePulsarTopics', () => {
  it('creates the namespace and the topics once, partitioned as declared; a second run creates nothing', async () => {
    const connection = { webServiceUrl: pulsar.webUrl };
    const specs = [
      { topic: `persistent://public/${namespace}/orders`, partitions: 3 },
      { topic: `persistent://public/${namespace}/audit` },
    ];
    const first = await ensurePulsarTopics(connection, specs);
    expect(first).toEqual({
      createdNamespaces: [`public/${namespace}`],
      createdTopics: specs.map((spec) => spec.topic),
      conflicts: [],
    });
    expect(
      await pulsar.admin('GET', `persistent/public/${namespace}/orders/partitions`),
    ).toMatchObject({
      partitions: 3,
    });
    expect(await pulsar.admin('GET', `persistent/public/${namespace}`)).toContain(
      `persistent://public/${namespace}/audit`,
    );
    expect(await ensurePulsarTopics(connection, specs)).toEqual({
      createdNamespaces: [],
      createdTopics: [],
      conflicts: [],
    });
  });

  it('reports an existing topic partitioned otherwise and leaves it as it is', async () => {
    const connection = { webServiceUrl: pulsar.webUrl };
    await ensurePulsarTopics(connection, [
      { topic: `persistent://public/${namespace}/plain` },
      { topic: `persistent://public/${namespace}/two`, partitions: 2 },
    ]);
    const result = await ensurePulsarTopics(connection, [
      { topic: `persistent://public/${namespace}/plain`, partitions: 4 },
      { topic: `persistent://public/${namespace}/two`, partitions: 6 },
    ]);
    expect(result.createdTopics).toEqual([]);
    expect(result.conflicts).toEqual([
      { topic: `persistent://public/${namespace}/plain`, declared: 4, actual: 0 },
      { topic: `persistent://public/${namespace}/two`, declared: 6, actual: 2 },
    ]);
    expect(
      await pulsar.admin('GET', `persistent/public/${namespace}/two/partitions`),
    ).toMatchObject({
      partitions: 2,
    });
    expect(await pulsar.admin('GET', `persistent/public/${namespace}/partitioned`)).not.toContain(
      `persistent://public/${namespace}/plain`,
    );
  });

  it('refuses a tenant that does not exist, naming it, and creates nothing', async () => {
    const error = await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [
      { topic: `persistent://no-such-tenant-evgen/${namespace}/t` },
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarClientError);
    expect((error as Error).message).toMatch(/tenant 'no-such-tenant-evgen' does not exist/);
    expect((error as PulsarClientError).retryable).toBe(false);
  });
});

describe('publishPulsarEnvelope', () => {
  it('publishes keyed by aggregateId with the envelope ids as properties under Kafka header names', async () => {
    const route = { namespace, topic: 'shop.events', partitions: 2 };
    const topic = pulsarRouteTopic(route, 'p1.');
    expect(topic).toBe(`persistent://public/${namespace}/p1.shop.events`);
    await ensurePulsarTopics({ webServiceUrl: pulsar.webUrl }, [{ topic, partitions: 2 }]);
    const client = pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl });
    const consumer = client.consumer({ topics: [topic], subscription: 'read' });
    const received: PulsarInboundMessage[] = [];
    await consumer.start({
      onMessage(message) {
        received.push(message);
        consumer.ack(message);
      },
    });
    const producers = createPulsarProducers(client);
    const envelope: Envelope = {
      messageId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      eventType: 'shop.OrderPlaced',
      schemaVersion: 2,
      aggregateType: 'Order',
      aggregateId: 'order-ü-1',
      aggregateVersion: 7,
      occurredAt: '2026-12-04T01:02:03.004Z',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      payload: { orderId: 'order-ü-1', total: 12.5 },
    };
    try {
      const id = await publishPulsarEnvelope(producers, envelope, route, {
        prefix: 'p1.',
        properties: {
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          messageId: 'spoofed',
        },
      });
      expect(id.length).toBeGreaterThan(0);
      const [message] = await waitFor('the message', () =>
        received.length ? received : undefined,
      );
      expect(message!.key).toBe('order-ü-1');
      expect(JSON.parse(message!.payload.toString('utf8'))).toEqual(envelope);
      expect(message!.properties).toMatchObject({
        messageId: envelope.messageId,
        eventType: 'shop.OrderPlaced',
        schemaVersion: '2',
        aggregateType: 'Order',
        aggregateId: 'order-ü-1',
        aggregateVersion: '7',
        occurredAt: envelope.occurredAt,
        traceId: envelope.traceId,
        'content-type': 'application/json',
        ce_id: envelope.messageId,
        ce_type: 'shop.OrderPlaced',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
    } finally {
      await producers.close();
      await consumer.close();
    }
  });
});
