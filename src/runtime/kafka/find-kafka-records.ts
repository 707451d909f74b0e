/**
 * Where one messageId is on Kafka event topics: every record carrying it in its `messageId`
 * header (several when a relay or a CDC connector sent it again). For an outbox whose rows are
 * gone at once (the CDC outbox) this is how `evgen trace` shows that an event was published.
 *
 * The topics are read from their start up to the end offsets they had when the call began, in a
 * throwaway consumer group that is deleted afterwards. A partition whose last offsets are
 * transaction markers (exactly-once producers) never delivers its last offset, so reading also
 * ends once no record came for `idleMs` after the last one. Nothing is consumed for anyone else.
 */
import { randomBytes } from 'node:crypto';
import type { KafkaClient, KafkaInboundRecord } from './kafka-client.js';
import { KAFKA_HEADERS } from './kafka-record.js';

export interface FoundKafkaRecord {
  readonly topic: string;
  readonly partition: number;
  /** Decimal string. */
  readonly offset: string;
  readonly key: string | null;
  readonly eventType: string | undefined;
}

interface FindKafkaRecordsOptions {
  readonly client: KafkaClient;
  readonly topics: readonly string[];
  readonly messageId: string;
  /** Gives up (with what was found) after this long. Default 30 s. */
  readonly timeoutMs?: number;
  /** Ends reading when no record arrived for this long after the last one. Default 3 s. */
  readonly idleMs?: number;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** The records of `messageId` on `topics`, in topic, partition and offset order. */
export async function findKafkaRecordsByMessageId(
  options: FindKafkaRecordsOptions,
): Promise<FoundKafkaRecord[]> {
  const admin = await options.client.admin();
  const groupId = `evgen-trace.${randomBytes(4).toString('hex')}`;
  try {
    const existing = new Set(await admin.listTopics());
    const topics = options.topics.filter((topic) => existing.has(topic));
    // topic\0partition → last offset to read.
    const remaining = new Map<string, bigint>();
    for (const topic of topics) {
      for (const { partition, start, end } of await admin.topicOffsets(topic)) {
        if (BigInt(end) > BigInt(start)) remaining.set(`${topic}\0${partition}`, BigInt(end) - 1n);
      }
    }
    if (remaining.size === 0) return [];
    const found: FoundKafkaRecord[] = [];
    const consumer = options.client.consumer({ groupId, topics, fromBeginning: true });
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const overall = setTimeout(done, options.timeoutMs ?? 30_000);
    const idleMs = options.idleMs ?? 3_000;
    let idle: NodeJS.Timeout | undefined;
    const onRecord = async (record: KafkaInboundRecord) => {
      const slot = `${record.topic}\0${record.partition}`;
      const last = remaining.get(slot);
      if (last === undefined || BigInt(record.offset) > last) {
        consumer.pause([{ topic: record.topic, partition: record.partition }]);
        return;
      }
      clearTimeout(idle);
      idle = setTimeout(done, idleMs);
      if (headerText(record.headers[KAFKA_HEADERS.messageId]) === options.messageId) {
        found.push({
          topic: record.topic,
          partition: record.partition,
          offset: record.offset,
          key: record.key,
          eventType: headerText(record.headers[KAFKA_HEADERS.eventType]),
        });
      }
      if (BigInt(record.offset) === last) {
        remaining.delete(slot);
        consumer.pause([{ topic: record.topic, partition: record.partition }]);
        if (remaining.size === 0) done();
      }
    };
    await consumer.start({ onRecord });
    try {
      await finished;
    } finally {
      clearTimeout(overall);
      clearTimeout(idle);
      await consumer.close();
    }
    return found.sort(
      (a, b) =>
        (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0) ||
        a.partition - b.partition ||
        Number(BigInt(a.offset) - BigInt(b.offset)),
    );
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.close();
  }
}
