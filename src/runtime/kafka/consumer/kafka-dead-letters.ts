/**
 * A consumer's dead-letter topic: `listKafkaDeadLetters` shows what is there and why;
 * `replayKafkaDeadLetters` sends letters back once the cause is fixed.
 *
 * A Kafka topic is a log: reading it removes nothing, and a letter cannot be taken out of it.
 * Listing reads the topic from its start to the end offsets it had when the call began, in a
 * throwaway consumer group that is deleted afterwards (the consumer's own group is never touched).
 * Replaying produces a copy of each selected letter (same key, value, messageId and headers,
 * minus the dead-letter diagnostics, attempt count back to 1, `evgen-replays` + 1) to the
 * consumer's own first retry topic, due at once, so only that consumer sees it (or to the
 * original topic when the consumer has no retry topics). The copy passes the same inbox guard:
 * a message the consumer already handled is skipped as a duplicate, so replaying a letter twice
 * has one effect. The letter itself stays in the dead-letter topic; choose what to replay with
 * `filter` (e.g. by `offset`, `messageId` or `diagnostics.errorType`).
 */
import type { CommonDiagnostics } from '../../delivery/dead-letter-source.js';
import { randomBytes } from 'node:crypto';
import { readConfluentFrame } from '../confluent-framing.js';
import type {
  KafkaClient,
  KafkaHeaders,
  KafkaInboundRecord,
  KafkaProducer,
} from '../kafka-client.js';
import {
  KAFKA_CONSUMER_HEADERS as H,
  headerInteger,
  headerText,
  isRunnerHeader,
  type KafkaHeaderValue,
} from './consumer-headers.js';
import { KAFKA_MESSAGE_ID_HEADER, type KafkaConsumerRoutes } from './kafka-consumer-types.js';

/** What evgen recorded when it dead-lettered a record; absent fields were not recorded. */
export interface KafkaDeadLetterDiagnostics extends CommonDiagnostics {
  readonly consumer?: string;
  /** Where the record was first consumed (before any retry topic). */
  readonly originalTopic?: string;
  readonly originalPartition?: number;
  readonly originalOffset?: string;
  /** Epoch ms of the original record, as a decimal string. */
  readonly originalTimestamp?: string;
}

/** One dead letter: where it sits in the dead-letter topic, the original record, diagnostics. */
export interface KafkaDeadLetter {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  /** The `messageId` header, else the value's messageId (the envelope's, always the same). */
  readonly messageId: string | undefined;
  /** The `eventType` header, else the value's. */
  readonly eventType: string | undefined;
  /** The original value, unchanged. */
  readonly value: Buffer | null;
  /** Headers as stored (UTF-8), diagnostics included. */
  readonly headers: KafkaHeaders;
  readonly diagnostics: KafkaDeadLetterDiagnostics;
}

export interface ListKafkaDeadLettersOptions {
  /** The Kafka client adapter; a throwaway consumer group reads the dead-letter topic. */
  readonly client: KafkaClient;
  /** The consumer's routes (its dead-letter topic, and its retry topic for replays). */
  readonly routes: Pick<KafkaConsumerRoutes, 'groupId' | 'deadLetter' | 'retry'>;
  /** Returns at most this many letters (oldest first per partition). Default: all. */
  readonly limit?: number;
  /** Gives up reading after this long (a broker that stops answering). Default 30 000 ms. */
  readonly timeoutMs?: number;
}

export interface ReplayKafkaDeadLettersOptions extends ListKafkaDeadLettersOptions {
  /** Replays only letters for which this returns true; default: every letter. */
  readonly filter?: (letter: KafkaDeadLetter) => boolean;
  /** Producer for the copies; default: one created (acks = all, idempotent) and closed here. */
  readonly producer?: KafkaProducer;
}

export interface ReplayKafkaDeadLettersResult {
  /** messageIds sent back, in dead-letter order (partition, then offset). */
  readonly replayed: readonly string[];
  /** Letters looked at and not selected. */
  readonly kept: number;
  /** Where the copies went. */
  readonly topic: string;
}

/** Reads evgen's dead-letter headers. */
function kafkaDeadLetterDiagnostics(headers: KafkaHeaders): KafkaDeadLetterDiagnostics {
  const text = (name: string) => headerText(headers, name);
  const entries: [keyof KafkaDeadLetterDiagnostics, string | number | undefined][] = [
    ['consumer', text(H.consumer)],
    ['errorType', text(H.errorType)],
    ['errorMessage', text(H.errorMessage)],
    ['attempts', headerInteger(headers, H.attempts)],
    ['firstFailureAt', text(H.firstFailureAt)],
    ['lastFailureAt', text(H.lastFailureAt)],
    ['deadLetteredAt', text(H.deadLetteredAt)],
    ['traceId', text(H.traceId)],
    ['originalTopic', text(H.originalTopic)],
    ['originalPartition', headerInteger(headers, H.originalPartition)],
    ['originalOffset', text(H.originalOffset)],
    ['originalTimestamp', text(H.originalTimestamp)],
    ['replays', headerInteger(headers, H.replays)],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

function valueField(value: Buffer | null, name: string): string | undefined {
  if (value === null) return undefined;
  // A framed value (Confluent's wire format) holds the same JSON after its schema id: records a
  // registry client wrote often carry no headers, so their messageId is only there.
  const json = readConfluentFrame(value)?.data ?? value;
  try {
    const body: unknown = JSON.parse(
      Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8'),
    );
    const field =
      typeof body === 'object' && body !== null
        ? (body as Record<string, unknown>)[name]
        : undefined;
    return typeof field === 'string' && field !== '' ? field : undefined;
  } catch {
    return undefined;
  }
}

function toDeadLetter(record: KafkaInboundRecord): KafkaDeadLetter {
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    key: record.key,
    messageId:
      headerText(record.headers, KAFKA_MESSAGE_ID_HEADER) ?? valueField(record.value, 'messageId'),
    eventType: headerText(record.headers, 'eventType') ?? valueField(record.value, 'eventType'),
    value: record.value,
    headers: record.headers,
    diagnostics: kafkaDeadLetterDiagnostics(record.headers),
  };
}

/** Headers a replayed copy keeps: everything but one dead-lettering's diagnostics; a fresh attempt count. */
function kafkaReplayHeaders(
  headers: KafkaHeaders,
  now: Date = new Date(),
): Record<string, KafkaHeaderValue> {
  // Failure history (first/last failure, last error, original coordinates) stays for the record.
  const history = new Set<string>([
    H.firstFailureAt,
    H.lastFailureAt,
    H.lastErrorType,
    H.lastError,
    H.originalTopic,
    H.originalPartition,
    H.originalOffset,
    H.originalTimestamp,
  ]);
  const copy: Record<string, KafkaHeaderValue> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!isRunnerHeader(name) || history.has(name)) copy[name] = value;
  }
  copy[H.attempt] = '1';
  copy[H.retryDueAt] = now.toISOString();
  copy[H.replays] = String((headerInteger(headers, H.replays) ?? 0) + 1);
  copy[H.replayedAt] = now.toISOString();
  return copy;
}

/**
 * The letters of a consumer's dead-letter topic, oldest first per partition (partitions in
 * order), read up to the end offsets the topic had when the call began. Nothing is removed.
 */
export async function listKafkaDeadLetters(
  options: ListKafkaDeadLettersOptions,
): Promise<KafkaDeadLetter[]> {
  const topic = options.routes.deadLetter;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const admin = await options.client.admin();
  const groupId = `${options.routes.groupId}.dlt-inspect.${randomBytes(4).toString('hex')}`;
  try {
    const offsets = await admin.topicOffsets(topic);
    // Partition → last offset to read; empty partitions need no reading.
    const remaining = new Map<number, bigint>();
    for (const { partition, start, end } of offsets) {
      if (BigInt(end) > BigInt(start)) remaining.set(partition, BigInt(end) - 1n);
    }
    if (remaining.size === 0 || limit <= 0) return [];
    const byPartition = new Map<number, KafkaDeadLetter[]>();
    const consumer = options.client.consumer({ groupId, topics: [topic], fromBeginning: true });
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(done, timeoutMs);
    let timedOut = true;
    await consumer.start({
      onRecord: async (record) => {
        const last = remaining.get(record.partition);
        if (last === undefined || BigInt(record.offset) > last) {
          consumer.pause([{ topic, partition: record.partition }]);
          return;
        }
        const list = byPartition.get(record.partition) ?? [];
        list.push(toDeadLetter(record));
        byPartition.set(record.partition, list);
        if (BigInt(record.offset) === last) {
          remaining.delete(record.partition);
          consumer.pause([{ topic, partition: record.partition }]);
          if (remaining.size === 0) {
            timedOut = false;
            done();
          }
        }
      },
    });
    try {
      await finished;
    } finally {
      clearTimeout(timer);
      await consumer.close();
    }
    if (timedOut)
      throw new Error(
        `reading dead-letter topic ${topic} did not reach its end within ${timeoutMs} ms`,
      );
    const letters = [...byPartition.keys()]
      .sort((a, b) => a - b)
      .flatMap((partition) => byPartition.get(partition)!);
    return letters.slice(0, Number.isFinite(limit) ? limit : undefined);
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.close();
  }
}

/**
 * Replays a consumer's dead letters (see the module comment). Resolves once every copy was
 * acknowledged (acks = all); rejects on the first copy that is not, after which the letters not
 * yet replayed can simply be replayed again.
 */
export async function replayKafkaDeadLetters(
  options: ReplayKafkaDeadLettersOptions,
): Promise<ReplayKafkaDeadLettersResult> {
  const letters = await listKafkaDeadLetters(options);
  const selected = letters.filter((letter) => options.filter?.(letter) ?? true);
  const firstTier = options.routes.retry[0]?.topic;
  const producer =
    options.producer ?? (await options.client.producer({ acks: 'all', idempotent: true }));
  const replayed: string[] = [];
  let target = firstTier ?? '';
  try {
    for (const letter of selected) {
      const topic = firstTier ?? letter.diagnostics.originalTopic;
      if (topic === undefined)
        throw new Error(
          `dead letter ${letter.partition}/${letter.offset} names no original topic and the consumer has no retry topic`,
        );
      target = topic;
      await producer.send([
        {
          topic,
          key: letter.key ?? letter.messageId ?? '',
          value: letter.value ?? Buffer.alloc(0),
          headers: kafkaReplayHeaders(letter.headers),
        },
      ]);
      replayed.push(letter.messageId ?? `${letter.partition}/${letter.offset}`);
    }
  } finally {
    if (options.producer === undefined) await producer.close();
  }
  return { replayed, kept: letters.length - selected.length, topic: target };
}
