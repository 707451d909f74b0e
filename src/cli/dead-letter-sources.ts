/**
 * Dead letters as the operator commands see them, whatever the transport: one record shape, one
 * filter, and a source per transport that lists and replays a consumer's dead letters through the
 * runtime's own functions (so a replay keeps the messageId and goes through the inbox again).
 */
import { readableKafkaHeaders } from './kafka-header-text.js';
import type { ChannelModel } from 'amqplib';
import type { DeadLetter } from '../runtime/rabbitmq/dead-letters.js';
import type { KafkaDeadLetter } from '../runtime/kafka/consumer/kafka-dead-letters.js';
import { resolveTopology } from '../runtime/rabbitmq/topology.js';
import { compareStrings } from '../common/json-value.js';
import { readConfluentFrame } from '../runtime/kafka/confluent-framing.js';

/** One dead letter, transport-neutral. Absent fields were not recorded by whoever dead-lettered it. */
export interface DeadLetterRecord {
  readonly transport: 'rabbitmq' | 'kafka';
  readonly consumer: string;
  readonly messageId?: string;
  readonly eventType?: string;
  readonly errorType?: string;
  readonly errorMessage?: string;
  /** Handling attempts made, the first delivery included. */
  readonly attempts?: number;
  readonly firstFailureAt?: string;
  readonly lastFailureAt?: string;
  readonly deadLetteredAt?: string;
  readonly traceId?: string;
  /** Where it was first published: exchange + routing key, or topic/partition/offset. */
  readonly origin?: string;
  readonly replays?: number;
  /** A Kafka value in Confluent's wire format: its schema id (`body` is the JSON after it). */
  readonly schemaId?: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}

export interface DeadLetterFilter {
  readonly messageId?: string;
  readonly eventType?: string;
  readonly errorType?: string;
  /** ISO-8601: dead-lettered at or after. */
  readonly since?: string;
  /** ISO-8601: dead-lettered before. */
  readonly until?: string;
}

/** Whether `record` passes every filter given; a time filter excludes records without a time. */
export function matchesFilter(record: DeadLetterRecord, filter: DeadLetterFilter): boolean {
  if (filter.messageId !== undefined && record.messageId !== filter.messageId) return false;
  if (filter.eventType !== undefined && record.eventType !== filter.eventType) return false;
  if (filter.errorType !== undefined && record.errorType !== filter.errorType) return false;
  const at = record.deadLetteredAt === undefined ? NaN : Date.parse(record.deadLetteredAt);
  if (filter.since !== undefined && !(at >= Date.parse(filter.since))) return false;
  if (filter.until !== undefined && !(at < Date.parse(filter.until))) return false;
  return true;
}

export interface ReplayOutcome {
  readonly replayed: readonly string[];
  readonly kept: number;
}

/** A transport's dead letters for the catalog's consumers. */
export interface DeadLetterSource {
  readonly transport: DeadLetterRecord['transport'];
  list(consumer: string): Promise<DeadLetterRecord[]>;
  /** Replays the consumer's letters for which `select` is true; the others stay. */
  replay(consumer: string, select: (record: DeadLetterRecord) => boolean): Promise<ReplayOutcome>;
  /**
   * Dead queues/topics that `list` or `replay` found missing and counted as empty (a Kafka
   * dead-letter topic exists only once its consumer ran or the topology was set up).
   */
  missing(): readonly { readonly consumer: string; readonly deadQueue: string }[];
  close(): Promise<void>;
}

/** Printable text of a header value (AMQP long strings arrive as Buffers). */
function headerText(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

/** The diagnostics both transports record with a dead letter. */
interface CommonDiagnostics {
  readonly errorType?: string;
  readonly errorMessage?: string;
  readonly attempts?: number;
  readonly firstFailureAt?: string;
  readonly lastFailureAt?: string;
  readonly deadLetteredAt?: string;
  readonly traceId?: string;
  readonly replays?: number;
}

/** One record from what every transport knows; fields left undefined are omitted. */
function deadLetterRecord(letter: {
  readonly transport: DeadLetterRecord['transport'];
  readonly consumer: string;
  readonly messageId: string | undefined;
  readonly eventType: string | undefined;
  readonly diagnostics: CommonDiagnostics;
  readonly origin: string | undefined;
  readonly schemaId?: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}): DeadLetterRecord {
  const d = letter.diagnostics;
  const entries: [string, unknown][] = [
    ['transport', letter.transport],
    ['consumer', letter.consumer],
    ['messageId', letter.messageId],
    ['eventType', letter.eventType],
    ['errorType', d.errorType],
    ['errorMessage', d.errorMessage],
    ['attempts', d.attempts],
    ['firstFailureAt', d.firstFailureAt],
    ['lastFailureAt', d.lastFailureAt],
    ['deadLetteredAt', d.deadLetteredAt],
    ['traceId', d.traceId],
    ['origin', letter.origin],
    ['replays', d.replays],
    ['schemaId', letter.schemaId],
    [
      'headers',
      Object.fromEntries(Object.entries(letter.headers).sort(([a], [b]) => compareStrings(a, b))),
    ],
    ['body', letter.body],
  ];
  return Object.fromEntries(
    entries.filter(([, value]) => value !== undefined),
  ) as unknown as DeadLetterRecord;
}

function fromRabbit(consumer: string, letter: DeadLetter): DeadLetterRecord {
  const d = letter.diagnostics;
  return deadLetterRecord({
    transport: 'rabbitmq',
    consumer,
    messageId: letter.messageId,
    eventType: letter.eventType,
    diagnostics: d,
    origin:
      d.originalExchange !== undefined || d.originalRoutingKey !== undefined
        ? `exchange ${d.originalExchange ?? '(default)'}, routing key ${d.originalRoutingKey ?? ''}`
        : undefined,
    headers: Object.fromEntries(
      Object.entries(letter.headers).map(([name, value]) => [name, headerText(value)]),
    ),
    body: letter.content.toString('utf8'),
  });
}

/** RabbitMQ dead queues (`<prefix><consumer>.dead`), read and replayed by the runtime's functions. */
export async function rabbitDeadLetterSource(
  url: string,
  prefix: string,
): Promise<DeadLetterSource> {
  const amqp = await import('amqplib');
  const { listRabbitMqDeadLetters, replayRabbitMqDeadLetters } =
    await import('../runtime/rabbitmq/dead-letters.js');
  const connection: ChannelModel = await amqp.connect(url);
  connection.on('error', () => undefined);
  // Only queue names matter here: subscriptions and tiers do not change the dead queue's name.
  const routesOf = (consumer: string) =>
    resolveTopology(
      { exchanges: [], consumers: [{ name: consumer, subscriptions: [] }] },
      { prefix },
    ).consumers[consumer]!;
  return {
    transport: 'rabbitmq',
    async list(consumer) {
      const letters = await listRabbitMqDeadLetters({ connection, routes: routesOf(consumer) });
      return letters.map((letter) => fromRabbit(consumer, letter));
    },
    async replay(consumer, select) {
      return replayRabbitMqDeadLetters({
        connection,
        routes: routesOf(consumer),
        filter: (letter) => select(fromRabbit(consumer, letter)),
      });
    },
    // A missing dead queue is an error here (a wrong --prefix): its consumer declares it at start.
    missing: () => [],
    async close() {
      await connection.close().catch(() => undefined);
    },
  };
}

function fromKafka(consumer: string, letter: KafkaDeadLetter): DeadLetterRecord {
  const d = letter.diagnostics;
  // Shown as its schema id and the JSON, not as five bytes of binary before the text.
  const frame = readConfluentFrame(letter.value);
  return deadLetterRecord({
    transport: 'kafka',
    consumer,
    messageId: letter.messageId,
    eventType: letter.eventType,
    diagnostics: d,
    origin:
      d.originalTopic !== undefined
        ? `topic ${d.originalTopic}, partition ${d.originalPartition ?? '?'}, offset ${d.originalOffset ?? '?'}`
        : undefined,
    headers: readableKafkaHeaders(letter.headers),
    ...(frame !== undefined ? { schemaId: frame.schemaId } : {}),
    body:
      frame !== undefined
        ? Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength).toString(
            'utf8',
          )
        : (letter.value?.toString('utf8') ?? ''),
  });
}

/**
 * Kafka dead-letter topics (`<prefix><consumer>.dlt`), read in a throwaway consumer group and
 * replayed into the consumer's first retry topic by the runtime's functions. `tiers` must be the
 * retry tiers the services run with (the first tier's topic receives replays).
 */
export async function kafkaDeadLetterSource(
  brokers: readonly string[],
  prefix: string,
  tiers: readonly number[] | undefined,
): Promise<DeadLetterSource> {
  const [
    { kafkajsClient },
    { listKafkaDeadLetters, replayKafkaDeadLetters },
    { kafkaConsumerTopics },
  ] = await Promise.all([
    import('../runtime/kafka/kafkajs-client.js'),
    import('../runtime/kafka/consumer/kafka-dead-letters.js'),
    import('../runtime/kafka/topic-names.js'),
  ]);
  const client = kafkajsClient({ brokers, clientId: 'evgen-cli' });
  const routesOf = (consumer: string) => ({
    groupId: `${prefix}${consumer}`,
    ...kafkaConsumerTopics(consumer, tiers, prefix),
  });
  // A dead-letter topic is created with its consumer's topics (by the service or a set-up
  // script): before that the consumer has no dead letters, which is not an error.
  let topics: Promise<Set<string>> | undefined;
  const missing = new Map<string, string>();
  const exists = async (consumer: string, topic: string) => {
    topics ??= (async () => {
      const admin = await client.admin();
      try {
        return new Set(await admin.listTopics());
      } finally {
        await admin.close();
      }
    })();
    if ((await topics).has(topic)) return true;
    missing.set(consumer, topic);
    return false;
  };
  return {
    transport: 'kafka',
    async list(consumer) {
      const routes = routesOf(consumer);
      if (!(await exists(consumer, routes.deadLetter))) return [];
      const letters = await listKafkaDeadLetters({ client, routes });
      return letters.map((letter) => fromKafka(consumer, letter));
    },
    async replay(consumer, select) {
      const routes = routesOf(consumer);
      if (!(await exists(consumer, routes.deadLetter))) return { replayed: [], kept: 0 };
      const result = await replayKafkaDeadLetters({
        client,
        routes,
        filter: (letter) => select(fromKafka(consumer, letter)),
      });
      return { replayed: result.replayed, kept: result.kept };
    },
    missing: () => [...missing].map(([consumer, deadQueue]) => ({ consumer, deadQueue })),
    async close() {
      // The list/replay functions close the consumers and producers they open.
    },
  };
}
