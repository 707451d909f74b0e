/**
 * The project's own broker scripts: the shared broker answers the Kafka protocol, and an extra
 * broker (own ports and data) can be SIGKILLed by its PID and restarted without touching it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  isKafkaProcess,
  kafkaAnswers,
  randomClusterId,
  SHARED_KAFKA_PORT,
  startExtraKafkaBroker,
  type ExtraKafkaBroker,
} from '../support/kafka/broker.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';

describe('test Kafka broker', () => {
  let extra: ExtraKafkaBroker | undefined;
  afterAll(async () => {
    await extra?.destroy();
  });

  it('cluster ids are 22 base64url characters that never start with "-" (StorageTool would read it as an option)', () => {
    // Without the guard 1 id in 64 starts with '-': 2,000 draws hit one with near certainty.
    const ids = Array.from({ length: 2_000 }, () => randomClusterId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the shared broker answers ApiVersions and Metadata; a closed port does not', async () => {
    expect(await kafkaAnswers('127.0.0.1', SHARED_KAFKA_PORT)).toBe(true);
    expect(await kafkaAnswers('127.0.0.1', 1)).toBe(false);
  });

  it('an extra broker is killed by its PID and restarted with its data kept', async () => {
    extra = await startExtraKafkaBroker();
    const pid = extra.pid()!;
    expect(isKafkaProcess(pid)).toBe(true);
    const kafka = await createTestKafka(KAFKA_CLIENTS[0]!.create, extra.brokers);
    const [topic] = await kafka.createTopics([{ topic: 'kept', partitions: 3 }]);
    await kafka.admin.close();

    await extra.kill();
    expect(isKafkaProcess(pid)).toBe(false);
    expect(await kafkaAnswers('127.0.0.1', extra.port)).toBe(false);
    expect(await kafkaAnswers('127.0.0.1', SHARED_KAFKA_PORT)).toBe(true);

    await extra.restart();
    expect(extra.pid()).not.toBe(pid);
    const again = await createTestKafka(KAFKA_CLIENTS[0]!.create, extra.brokers);
    try {
      const [described] = await again.admin.describeTopics([topic!]);
      expect(described!.partitions).toBe(3);
    } finally {
      await again.admin.close();
    }
  }, 180_000);
});
