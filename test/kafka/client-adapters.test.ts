/**
 * evgen's Kafka interface, adapter by adapter, against the real broker: topic admin, keyed
 * acknowledged sends, consumer groups with manual commits, per-partition pause/resume and seek.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KafkaProducer } from 'evgen/runtime';
import type { KafkaConsumer, KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import {
  createTestKafka,
  KAFKA_CLIENTS,
  waitFor,
  type TestKafka,
} from '../support/kafka/test-kafka.js';

describe.each(KAFKA_CLIENTS)('Kafka client adapter: $name', ({ create }) => {
  let kafka: TestKafka | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await kafka?.cleanup();
    kafka = undefined;
  });

  const client = () => create({ brokers: [kafka!.brokers], clientId: 'evgen-test' });
  async function producer(): Promise<KafkaProducer> {
    const p = await client().producer();
    closers.push(() => p.close());
    return p;
  }
  async function consume(
    groupId: string,
    topics: string[],
  ): Promise<{ consumer: KafkaConsumer; records: KafkaInboundRecord[] }> {
    const consumer = client().consumer({ groupId, topics, sessionTimeoutMs: 6_000 });
    closers.push(() => consumer.close());
    const records: KafkaInboundRecord[] = [];
    await consumer.start({ onRecord: async (record) => void records.push(record) });
    return { consumer, records };
  }

  it('administers topics: create with configs, describe, grow, alter one config, delete', async () => {
    kafka = await createTestKafka(create);
    const [topic] = await kafka.createTopics([
      { topic: 'admin', partitions: 2, configs: { 'retention.ms': '3600000' } },
    ]);
    let [described] = await kafka.admin.describeTopics([topic!]);
    expect(described).toMatchObject({ topic, partitions: 2, replicationFactor: 1 });
    expect(described!.configs['retention.ms']).toBe('3600000');
    expect(described!.configs['cleanup.policy']).toBe('delete');

    await expect(kafka.admin.createTopics([{ topic: topic!, partitions: 2 }])).rejects.toThrow();
    await kafka.admin.createPartitions(topic!, 3);
    await kafka.admin.alterTopicConfigs(topic!, { 'cleanup.policy': 'compact' });
    // KRaft: the controller accepts the change, the broker answering describe applies it from the
    // metadata log a moment later (a describe right after the alter was seen to return 'delete').
    await waitFor('the altered config visible', async () => {
      [described] = await kafka!.admin.describeTopics([topic!]);
      return described!.configs['cleanup.policy'] === 'compact' ? true : undefined;
    });
    expect(described!.partitions).toBe(3);
    expect(described!.configs['cleanup.policy']).toBe('compact');
    expect(described!.configs['retention.ms']).toBe('3600000');
    expect(await kafka.admin.listTopics()).toContain(topic);

    await kafka.admin.deleteTopics([topic!, `${kafka.prefix}never-created`]);
    await waitFor('topic deletion', async () =>
      (await kafka!.admin.listTopics()).includes(topic!) ? undefined : true,
    );
    await expect(kafka.admin.describeTopics([topic!])).rejects.toThrow();
  });

  it('sends keyed records with headers to the key partition, in order per key; commits', async () => {
    kafka = await createTestKafka(create);
    const [topic] = await kafka.createTopics([{ topic: 'orders', partitions: 3 }]);
    const p = await producer();
    const keys = Array.from({ length: 8 }, (_, i) => `order-${i}`);
    const sent = keys.flatMap((key) =>
      [1, 2, 3].map((n) => ({
        topic: topic!,
        key,
        value: JSON.stringify({ key, n }),
        headers: { messageId: `${key}-${n}`, 'content-type': 'application/json' },
      })),
    );
    await p.send(sent.slice(0, 12));
    await p.send(sent.slice(12));

    const groupId = kafka.group('reader');
    const { consumer, records } = await consume(groupId, [topic!]);
    await waitFor('every record', () => (records.length >= sent.length ? true : undefined));
    expect(records).toHaveLength(sent.length);
    for (const record of records) {
      expect(record.partition).toBe(p.partitionFor(record.key!, 3));
      const value = JSON.parse(record.value!.toString('utf8')) as { key: string; n: number };
      expect(record.key).toBe(value.key);
      expect(record.headers).toEqual({
        messageId: `${value.key}-${value.n}`,
        'content-type': 'application/json',
      });
      expect(Number(record.timestamp)).toBeGreaterThan(0);
    }
    for (const key of keys) {
      expect(records.filter((r) => r.key === key).map((r) => r.headers.messageId)).toEqual([
        `${key}-1`,
        `${key}-2`,
        `${key}-3`,
      ]);
    }
    // At least two partitions were used by these keys.
    expect(new Set(records.map((r) => r.partition)).size).toBeGreaterThan(1);

    const last = new Map<number, string>();
    for (const r of records) last.set(r.partition, (BigInt(r.offset) + 1n).toString());
    await consumer.commit(
      [...last].map(([partition, offset]) => ({ topic: topic!, partition, offset })),
    );
    expect(await kafka.admin.committedOffsets(groupId, topic!)).toEqual(last);
  });

  it('pauses one partition without blocking another; resume and seek deliver from the position', async () => {
    kafka = await createTestKafka(create);
    const [topic] = await kafka.createTopics([{ topic: 'paused', partitions: 2 }]);
    const p = await producer();
    const keyFor = (partition: number) => {
      for (let i = 0; ; i++) if (p.partitionFor(`k${i}`, 2) === partition) return `k${i}`;
    };
    const [k0, k1] = [keyFor(0), keyFor(1)];
    const send = (key: string, from: number, to: number) =>
      p.send(
        Array.from({ length: to - from }, (_, i) => ({
          topic: topic!,
          key,
          value: String(from + i),
        })),
      );
    await send(k0, 0, 2);
    await send(k1, 0, 2);
    const { consumer, records } = await consume(kafka.group('pauser'), [topic!]);
    const values = (partition: number) =>
      records.filter((r) => r.partition === partition).map((r) => r.value!.toString('utf8'));
    await waitFor('first records', () => (records.length === 4 ? true : undefined));

    consumer.pause([{ topic: topic!, partition: 0 }]);
    await send(k0, 2, 4);
    await send(k1, 2, 6);
    await waitFor('partition 1 keeps flowing', () => (values(1).length === 6 ? true : undefined));
    expect(values(0)).toEqual(['0', '1']);

    consumer.resume([{ topic: topic!, partition: 0 }]);
    await waitFor('partition 0 after resume', () => (values(0).length === 4 ? true : undefined));
    expect(values(0)).toEqual(['0', '1', '2', '3']);

    consumer.seek({ topic: topic!, partition: 1, offset: '3' });
    await waitFor('partition 1 after seek', () => (values(1).length === 9 ? true : undefined));
    expect(values(1)).toEqual(['0', '1', '2', '3', '4', '5', '3', '4', '5']);
    expect(
      consumer
        .assignment()
        .map((tp) => tp.partition)
        .sort(),
    ).toEqual([0, 1]);
  });

  it('refuses an idempotent producer without acks = all', async () => {
    kafka = await createTestKafka(create);
    await expect(client().producer({ acks: 'leader' })).rejects.toThrow(/acks = 'all'/);
  });
});
