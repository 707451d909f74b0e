/**
 * The transports' own waiting goes through the runner's clock/random/timers seams, so a test can
 * drive it by hand (pure logic fakes, or a peer that refuses or never answers; no broker):
 * Kafka's partition holds and offset-commit retries fire on the given timers, the kafkajs
 * adapter's close() gives up on a silent broker when they say so, RabbitMQ's connector backs off
 * by the given random and timers between refused connection attempts, and its confirmed
 * publisher's confirm timeout fires on them.
 */
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { kafkajsClient } from '../../src/runtime/kafka/kafkajs-client.js';
import { OffsetCommitter } from '../../src/runtime/kafka/consumer/offset-committer.js';
import { PartitionHolds } from '../../src/runtime/kafka/consumer/partition-holds.js';
import type { KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { ConfirmedPublisher } from '../../src/runtime/rabbitmq/confirmed-publisher.js';
import { createAmqpConnector } from '../../src/runtime/rabbitmq/connector.js';
import { PublishTimeoutError } from '../../src/runtime/rabbitmq/errors.js';
import { manualTimers } from '../outbox/support/dialects.js';
import { HELD_PARTITION, recordingConsumer } from '../kafka-consumer/support/recording-consumer.js';

const tp = HELD_PARTITION;

/** Lets the promises already settled run their callbacks (no time passes). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const record = { ...tp, offset: '7' } as KafkaInboundRecord;

describe('Kafka partition holds on the timers seam', () => {
  it('a held partition resumes when the given timers reach its delay, not before', () => {
    const time = manualTimers();
    const calls: string[] = [];
    const holds = new PartitionHolds(
      () => recordingConsumer(calls),
      () => true,
      (error) => {
        throw error;
      },
      time.timers,
    );
    holds.assigned([tp], true);
    holds.hold(record, 5_000);
    expect(calls).toEqual(['pause orders:0', 'seek 7']);
    time.advance(4_999);
    expect(calls).toHaveLength(2);
    time.advance(1);
    expect(calls).toEqual(['pause orders:0', 'seek 7', 'resume orders:0']);
    expect(time.pending()).toBe(0);
  });

  it('stopping clears the hold: no timer resumes the partition afterwards', () => {
    const time = manualTimers();
    const calls: string[] = [];
    const holds = new PartitionHolds(
      () => recordingConsumer(calls),
      () => true,
      () => undefined,
      time.timers,
    );
    holds.assigned([tp], true);
    holds.hold(record, 1_000);
    holds.clearTimers();
    expect(time.pending()).toBe(0);
    time.advance(10_000);
    expect(calls).toEqual(['pause orders:0', 'seek 7']);
  });
});

describe('Kafka offset commits on the timers seam', () => {
  it('a failed commit is tried again when the given timers reach retryDelayMs', async () => {
    const time = manualTimers();
    const requests: string[] = [];
    let refuse = true;
    const committer = new OffsetCommitter({
      commit: async (offsets) => {
        requests.push(offsets.map((offset) => offset.offset).join(','));
        if (refuse) throw new Error('coordinator not available');
      },
      retryDelayMs: 3_000,
      refreshMs: 0,
      timers: time.timers,
    });
    committer.received(tp, 7n);
    committer.settled(tp, 8n);
    await turn();
    expect(requests).toEqual(['8']);
    expect(committer.pendingCount).toBe(1);
    expect(time.pending()).toBe(1);
    refuse = false;
    time.advance(2_999);
    await turn();
    expect(requests).toEqual(['8']);
    time.advance(1);
    await turn();
    expect(requests).toEqual(['8', '8']);
    expect(committer.commits).toBe(1);
    expect(committer.pendingCount).toBe(0);
    expect(time.pending()).toBe(0);
    committer.close();
  });

  it('positions are committed again each refreshMs of the given timers', async () => {
    const time = manualTimers();
    const requests: string[] = [];
    const committer = new OffsetCommitter({
      commit: async (offsets) => {
        requests.push(offsets.map((offset) => offset.offset).join(','));
      },
      refreshMs: 5_000,
      timers: time.timers,
    });
    committer.received(tp, 7n);
    committer.settled(tp, 8n);
    await turn();
    expect(requests).toEqual(['8']);
    time.advance(4_999);
    await turn();
    expect(requests).toEqual(['8']);
    time.advance(1);
    await turn();
    expect(requests).toEqual(['8', '8']);
    time.advance(5_000);
    await turn();
    expect(requests).toEqual(['8', '8', '8']);
    committer.close();
    expect(time.pending()).toBe(0);
  });
});

describe("RabbitMQ connector's backoff on the random and timers seams", () => {
  it('waits base · 2^(n-1) · (1 + jitter · random) on the given timers between refused attempts', async () => {
    const waits: number[] = [];
    const connector = createAmqpConnector({
      // Nothing listens on port 1: every attempt is refused at once.
      url: 'amqp://guest:guest@127.0.0.1:1',
      maxAttempts: 3,
      backoff: { baseMs: 100, capMs: 1_000, jitter: 0.5 },
      random: () => 0.5,
      timers: {
        setTimeout(callback, ms) {
          waits.push(ms);
          queueMicrotask(callback);
          return waits.length;
        },
        clearTimeout: () => undefined,
      },
    });
    await expect(connector.connection()).rejects.toThrow(/ECONNREFUSED/);
    // Two waits between three attempts: 100 · 1.25 and 200 · 1.25.
    expect(waits).toEqual([125, 250]);
    await connector.close();
  });
});

describe("the kafkajs adapter's close() on the timers seam", () => {
  it('gives up on a broker that never answers when the given timers reach 5 s, not before', async () => {
    // Accepts connections and never answers: kafkajs' connect and disconnect wait on it.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const time = manualTimers();
      const consumer = kafkajsClient({ brokers: [`127.0.0.1:${port}`] }).consumer({
        groupId: 'seams',
        topics: ['orders'],
        timers: time.timers,
      });
      void consumer.start({ onRecord: async () => undefined }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      let closed = false;
      const closing = consumer.close().then(() => (closed = true));
      // Real time passes (the bound is 5 s of the given timers, not of the process's).
      await new Promise((resolve) => setTimeout(resolve, 300));
      time.advance(4_999);
      await turn();
      expect(closed).toBe(false);
      time.advance(1);
      await closing;
      expect(time.pending()).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe("RabbitMQ confirmed publisher's confirm timeout on the timers seam", () => {
  it('rejects with PublishTimeoutError when the given timers reach confirmTimeoutMs, not before', async () => {
    const time = manualTimers();
    // Nothing listens on port 1: the connector keeps backing off, the publish never gets a channel.
    const connector = createAmqpConnector({ url: 'amqp://guest:guest@127.0.0.1:1' });
    const publisher = new ConfirmedPublisher(connector, {
      confirmTimeoutMs: 2_000,
      timers: time.timers,
    });
    let outcome: unknown;
    const publishing = publisher
      .publish('orders', 'placed', Buffer.from('{}'), { messageId: 'm-1' })
      .catch((error: unknown) => (outcome = error));
    time.advance(1_999);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(outcome).toBeUndefined();
    time.advance(1);
    await publishing;
    expect(outcome).toBeInstanceOf(PublishTimeoutError);
    expect((outcome as PublishTimeoutError).timeoutMs).toBe(2_000);
    expect(publisher.stats.timedOut).toBe(1);
    expect(time.pending()).toBe(0);
    await publisher.close();
    await connector.close();
  });
});
