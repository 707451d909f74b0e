/**
 * The Kafka series that come from the client and the broker rather than from a handler, on the
 * real broker for every client adapter, read back from the Prometheus text:
 *   - the consumer's polls: `evgen_consumer_fetches_total` rises while it runs (idle fetches
 *     included) and `evgen_consumer_last_fetch_timestamp_seconds` is the time of the last one;
 *   - the depths read from the operator's side (end offsets against committed offsets): records
 *     waiting on the event topic before the consumer runs and none once it committed them; a dead
 *     letter raises the dead-letter topic's depth, and a group that works the letters off and
 *     commits brings it back to 0 (without such a group every stored letter counts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  createPrometheusMetrics,
  kafkaQueueDepths,
  type KafkaConsumerRunner,
  type PrometheusMetrics,
} from 'evgen/runtime';
import type { KafkaConsumer } from '../../src/runtime/kafka/kafka-client.js';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
} from '../kafka-consumer/support/inventory-on-kafka.js';
import { parsePrometheusText, valueOf, type Sample } from './support/prometheus-text.js';

describe.each(KAFKA_CLIENTS)('Kafka broker-side metrics ($name, real broker)', ({ create }) => {
  let setup: InventoryOnKafka | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await setup?.cleanup();
    setup = undefined;
  });

  const read = async (metrics: PrometheusMetrics): Promise<Sample[]> =>
    parsePrometheusText(await metrics.text());

  it('reports polls, event-topic depth and dead-letter depth as they change', async () => {
    const s = (setup = await inventoryOnKafka(create, { partitions: 1, tiersMs: [300] }));
    const metrics = createPrometheusMetrics();
    const opsGroup = s.kafka.group('dead-letter-ops');
    metrics.watchQueueDepths(
      kafkaQueueDepths(s.kafka.admin, s.routes, { deadLetterGroupId: opsGroup }),
    );
    // The same topics read without a group working the letters off, under another name.
    metrics.watchQueueDepths(kafkaQueueDepths(s.kafka.admin, { ...s.routes, consumer: 'no-ops' }));
    const depth = (samples: Sample[], role: string, consumer = s.routes.consumer) =>
      valueOf(samples, 'evgen_queue_messages', { consumer, role });

    const empty = await read(metrics);
    expect(depth(empty, 'work')).toBe(0);
    expect(depth(empty, 'retry')).toBe(0);
    expect(depth(empty, 'dead_letter')).toBe(0);

    await s.publish();
    await s.publish();
    const poison = s.envelope();
    s.failures.set(poison.messageId, { kind: 'non-retryable', times: 1 });
    await s.send(poison);
    const waiting = await read(metrics);
    expect(depth(waiting, 'work')).toBe(3);
    expect(depth(waiting, 'dead_letter')).toBe(0);

    const runner: KafkaConsumerRunner = createKafkaConsumerRunner({
      handler: s.handler(),
      kafka: {
        client: s.client,
        routes: s.routes,
      },
    });
    cleanups.push(() => runner.stop());
    metrics.watchConsumer(s.routes.consumer, runner);
    const startedAt = Date.now() / 1_000;
    await runner.start();

    let last: Sample[] = [];
    await waitForSamples('two handled, one dead letter, the event topic committed', async () => {
      await runner.flushCommits();
      last = await read(metrics);
      return valueOf(last, 'evgen_consumer_handled_total', { consumer: s.routes.consumer }) === 2 &&
        depth(last, 'dead_letter') === 1 &&
        depth(last, 'work') === 0
        ? true
        : undefined;
    });
    expect(depth(last, 'dead_letter', 'no-ops')).toBe(1);

    // Polls: counted, still rising while the consumer idles, timestamped by the last one.
    const fetches = valueOf(last, 'evgen_consumer_fetches_total', { consumer: s.routes.consumer });
    expect(fetches).toBeGreaterThan(0);
    const later = await waitForSamples('another fetch answered', async () => {
      const now = await read(metrics);
      const more = valueOf(now, 'evgen_consumer_fetches_total', { consumer: s.routes.consumer });
      return more !== undefined && more > fetches! ? now : undefined;
    });
    const lastFetch = valueOf(later, 'evgen_consumer_last_fetch_timestamp_seconds', {
      consumer: s.routes.consumer,
    });
    expect(lastFetch).toBeGreaterThanOrEqual(startedAt);
    expect(lastFetch).toBeLessThanOrEqual(Date.now() / 1_000);
    expect(runner.metrics().lastFetchAt! / 1_000).toBeGreaterThanOrEqual(lastFetch!);

    // An operator's group reads the dead-letter topic and commits what it dealt with.
    const ops: KafkaConsumer = s.client.consumer({
      groupId: opsGroup,
      topics: [s.routes.deadLetter],
    });
    cleanups.push(() => ops.close());
    await ops.start({
      async onRecord(record) {
        await ops.commit([
          {
            topic: record.topic,
            partition: record.partition,
            offset: (BigInt(record.offset) + 1n).toString(),
          },
        ]);
      },
    });
    const workedOff = await waitForSamples(
      'the dead letter worked off by the ops group',
      async () => {
        const now = await read(metrics);
        return depth(now, 'dead_letter') === 0 ? now : undefined;
      },
    );
    expect(depth(workedOff, 'dead_letter', 'no-ops')).toBe(1);
  });
});

async function waitForSamples<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  let found: T | undefined;
  await waitFor(
    async () => {
      found = await check();
      return found !== undefined;
    },
    60_000,
    what,
  );
  return found!;
}
