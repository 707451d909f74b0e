/**
 * An in-memory stand-in for the Kafka transport interface, for the runner's pure logic (routing,
 * headers, holds): topics are arrays of records per partition; a consumer owns every partition
 * of its topics, hands records over one at a time per partition in offset order (partitions
 * concurrently), honours pause/seek/resume as the adapters promise, and stores commits. Broker
 * behaviour (rebalances, restarts, acks) is tested against the real broker, not here.
 */
import type {
  KafkaAdmin,
  KafkaClient,
  KafkaCommitOffset,
  KafkaConsumer,
  KafkaConsumerHandlers,
  KafkaConsumerOptions,
  KafkaInboundRecord,
  KafkaOutboundRecord,
  KafkaProducer,
  KafkaTopicPartition,
} from '../../../src/runtime/kafka/kafka-client.js';

type StoredRecord = KafkaInboundRecord & { readonly rawHeaders: Record<string, string | Buffer> };

export class MemoryKafka implements KafkaClient {
  readonly name = 'memory';
  readonly topics = new Map<string, StoredRecord[][]>();
  readonly committed = new Map<string, string>();
  /** Makes the next `n` sends reject (a broker that does not acknowledge). */
  failSends = 0;
  private readonly wakers = new Set<() => void>();

  createTopic(topic: string, partitions = 1): void {
    this.topics.set(
      topic,
      Array.from({ length: partitions }, () => []),
    );
  }

  records(topic: string): StoredRecord[] {
    return (this.topics.get(topic) ?? []).flat();
  }

  append(record: KafkaOutboundRecord, timestamp = Date.now()): void {
    const partitions = this.topics.get(record.topic);
    if (partitions === undefined) throw new Error(`unknown topic ${record.topic}`);
    const partition =
      Array.from(record.key).reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) %
      partitions.length;
    const log = partitions[partition]!;
    const rawHeaders = { ...(record.headers ?? {}) } as Record<string, string | Buffer>;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(rawHeaders))
      headers[name] = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    log.push({
      topic: record.topic,
      partition,
      offset: String(log.length),
      key: record.key,
      value: Buffer.isBuffer(record.value) ? record.value : Buffer.from(record.value),
      headers,
      timestamp: String(timestamp),
      rawHeaders,
    });
    for (const wake of this.wakers) wake();
  }

  async producer(): Promise<KafkaProducer> {
    return {
      send: async (records) => {
        if (this.failSends > 0) {
          this.failSends--;
          throw new Error('not acknowledged (memory broker told to fail)');
        }
        for (const record of records) this.append(record);
      },
      partitionFor: () => 0,
      close: async () => undefined,
    };
  }

  consumer(options: KafkaConsumerOptions): KafkaConsumer {
    return new MemoryConsumer(this, options);
  }

  admin(): Promise<KafkaAdmin> {
    throw new Error('not in the memory stand-in');
  }

  /** Resolves on the next append or after `ms`. */
  nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}

class MemoryConsumer implements KafkaConsumer {
  private readonly paused = new Set<string>();
  private readonly position = new Map<string, number>();
  private closed = false;
  private readonly loops: Promise<void>[] = [];
  private tps: KafkaTopicPartition[] = [];

  constructor(
    private readonly broker: MemoryKafka,
    private readonly options: KafkaConsumerOptions,
  ) {}

  async start(handlers: KafkaConsumerHandlers): Promise<void> {
    this.tps = this.options.topics.flatMap((topic) =>
      (this.broker.topics.get(topic) ?? []).map((_, partition) => ({ topic, partition })),
    );
    handlers.onAssigned?.(this.tps);
    for (const tp of this.tps) {
      const key = `${tp.topic}:${tp.partition}`;
      this.position.set(
        key,
        Number(this.broker.committed.get(`${this.options.groupId}/${key}`) ?? 0),
      );
      this.loops.push(this.loop(tp, key, handlers));
    }
  }

  private async loop(tp: KafkaTopicPartition, key: string, handlers: KafkaConsumerHandlers) {
    while (!this.closed) {
      const log = this.broker.topics.get(tp.topic)![tp.partition]!;
      const at = this.position.get(key)!;
      if (this.paused.has(key) || at >= log.length) {
        await this.broker.nextChange(5);
        continue;
      }
      this.position.set(key, at + 1);
      const { rawHeaders: _raw, ...record } = log[at]!;
      try {
        await handlers.onRecord(record);
      } catch (error) {
        handlers.onError?.(error);
      }
    }
  }

  async commit(offsets: readonly KafkaCommitOffset[]): Promise<void> {
    for (const o of offsets)
      this.broker.committed.set(`${this.options.groupId}/${o.topic}:${o.partition}`, o.offset);
  }

  pause(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) this.paused.add(`${tp.topic}:${tp.partition}`);
  }

  resume(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) this.paused.delete(`${tp.topic}:${tp.partition}`);
  }

  seek(position: KafkaCommitOffset): void {
    this.position.set(`${position.topic}:${position.partition}`, Number(position.offset));
  }

  assignment(): KafkaTopicPartition[] {
    return [...this.tps];
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.loops);
  }
}
