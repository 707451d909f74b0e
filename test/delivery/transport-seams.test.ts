/**
 * The transports' own waiting goes through the runner's clock/random/timers seams, so a test can
 * drive it by hand (pure logic fakes; no broker): Kafka's partition holds and offset-commit
 * retries fire on the given timers, and RabbitMQ's connector backs off by the given random and
 * timers between refused connection attempts.
 */
import { describe, expect, it } from 'vitest';
import { OffsetCommitter } from '../../src/runtime/kafka/consumer/offset-committer.js';
import { PartitionHolds } from '../../src/runtime/kafka/consumer/partition-holds.js';
import type {
  KafkaCommitOffset,
  KafkaConsumer,
  KafkaInboundRecord,
  KafkaTopicPartition,
} from '../../src/runtime/kafka/kafka-client.js';
import { createAmqpConnector } from '../../src/runtime/rabbitmq/connector.js';
import { manualTimers } from '../outbox/support/dialects.js';

const tp = { topic: 'orders', partition: 0 };

/** Lets the promises already settled run their callbacks (no time passes). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The calls a partition hold makes on the consumer, in order. */
function recordingConsumer(calls: string[]): KafkaConsumer {
  const name = (tps: readonly KafkaTopicPartition[]) =>
    tps.map((one) => `${one.topic}:${one.partition}`).join(',');
  return {
    pause: (tps: readonly KafkaTopicPartition[]) => calls.push(`pause ${name(tps)}`),
    resume: (tps: readonly KafkaTopicPartition[]) => calls.push(`resume ${name(tps)}`),
    seek: (position: KafkaCommitOffset) => calls.push(`seek ${position.offset}`),
    assignment: () => [tp],
  } as unknown as KafkaConsumer;
}

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
