/**
 * evgen's Kafka interface on kafkajs 2.2.4 (the user's choice; it has had no release since 2022).
 *
 * - Partitioner: kafkajs' `DefaultPartitioner`, which is murmur2 like the Java client
 *   (`LegacyPartitioner` is not).
 * - Producer: idempotent with acks = all; kafkajs retries an idempotent send without limit, so
 *   evgen bounds each send with `timeoutMs` instead. One send at a time and a new producer after
 *   a failed one (`serial-producer.ts`): concurrent sends lose acknowledged records.
 * - Consumer: kafkajs restarts a crashed consumer itself (`restartOnFailure`); records are
 *   resolved one by one so a pause or seek re-fetches exactly what was not handed out.
 */
// kafkajs is CommonJS: Node's ESM loader gives it as one default export, not named exports.
import kafkajs from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, IHeaders, Kafka, Producer } from 'kafkajs';
import {
  acksNumber,
  checkProducerOptions,
  partitionKey,
  type KafkaAdmin,
  type KafkaClient,
  type KafkaCommitOffset,
  type KafkaConnection,
  type KafkaConsumer,
  type KafkaConsumerHandlers,
  type KafkaConsumerOptions,
  type KafkaHeaders,
  type KafkaInboundRecord,
  type KafkaOutboundHeaders,
  type KafkaProducer,
  type KafkaProducerOptions,
  type KafkaTopicDescription,
  type KafkaTopicPartition,
  type KafkaTopicSpec,
} from './kafka-client.js';
import { serialProducer } from './serial-producer.js';
import { withTopicLookup } from './topic-lookup.js';
import { REAL_RUNNER_TIMERS, type RunnerTimers } from '../delivery/runner-timers.js';
import { waitAtMost } from '../sleep.js';

const { ConfigResourceTypes, Kafka: KafkaClass, logLevel, Partitioners } = kafkajs;

/** The kafkajs adapter. `kafkajs` is loaded by the caller's import of this module only. */
export function kafkajsClient(connection: KafkaConnection): KafkaClient {
  const kafka = new KafkaClass({
    clientId: connection.clientId ?? 'evgen',
    brokers: [...connection.brokers],
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 8 },
    ...(connection.requestTimeoutMs === undefined
      ? {}
      : { requestTimeout: connection.requestTimeoutMs }),
  });
  return {
    name: 'kafkajs',
    producer: async (options) =>
      withTopicLookup(await createProducer(kafka, options), () => createAdmin(kafka)),
    consumer: (options) => new KafkajsConsumer(kafka, options),
    admin: () => createAdmin(kafka),
  };
}

// --------------------------------------------------------------------------------------------
// Producer

async function createProducer(
  kafka: Kafka,
  options: KafkaProducerOptions = {},
): Promise<KafkaProducer> {
  const { acks, idempotent, timeoutMs } = checkProducerOptions(options);
  const partitioner = Partitioners.DefaultPartitioner();
  const connect = async (): Promise<Producer> => {
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent,
      // Idempotence keeps order across up to 5 in-flight requests per connection.
      maxInFlightRequests: idempotent ? 5 : undefined,
      allowAutoTopicCreation: false,
    });
    // A failed connect (e.g. its retries ran out) must not leave what it opened behind.
    await producer.connect().catch(async (error: unknown) => {
      await producer.disconnect().catch(() => undefined);
      throw error;
    });
    return producer;
  };
  // One send at a time, a new producer after a failed one (see serial-producer.ts): kafkajs
  // gives a timed-out request's sequence numbers to the next request, and with several sends
  // in flight that is another send's batch (measured with the broker paused 250 ms of every
  // 350 ms: acknowledged records missing from the topic, OUT_OF_ORDER_SEQUENCE_NUMBER). Its
  // own retries inside one send resend the same batch, which the broker deduplicates.
  const serial = await serialProducer<Producer>(
    {
      connect,
      send: async (producer, records, deadline) => {
        const byTopic = new Map<
          string,
          { key: string; value: Buffer | string; headers?: IHeaders }[]
        >();
        for (const record of records) {
          let list = byTopic.get(record.topic);
          if (!list) byTopic.set(record.topic, (list = []));
          list.push({ key: record.key, value: record.value, headers: copyHeaders(record.headers) });
        }
        const request = {
          acks: acksNumber(acks),
          timeout: timeoutMs,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        };
        await sendRetrying(() => producer.sendBatch(request), deadline);
      },
      close: (producer) => producer.disconnect(),
    },
    timeoutMs,
  );
  return {
    send: serial.send,
    probe: serial.probe,
    partitionFor(key, partitionCount) {
      return partitioner({
        topic: '',
        // Only the count matters to the key partitioner: murmur2(key) mod count.
        partitionMetadata: Array.from({ length: partitionCount }, (_, partitionId) => ({
          partitionErrorCode: 0,
          partitionId,
          leader: 0,
          replicas: [0],
          isr: [0],
        })),
        message: { key, value: null },
      });
    },
    close: serial.close,
  };
}

/**
 * kafkajs gives up on some retriable errors outside its own retry loop (e.g. the metadata of a
 * topic created a moment ago, or a leader that moved): send again until the deadline. A resend
 * may store a record twice; consumers are idempotent.
 */
async function sendRetrying<T>(send: () => Promise<T>, deadline: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const retriable =
        (error as { retriable?: unknown }).retriable === true ||
        (error as { originalError?: { retriable?: unknown } }).originalError?.retriable === true;
      const wait = Math.min(100 * 2 ** attempt, 2_000);
      if (!retriable || Date.now() + wait >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function copyHeaders(headers: KafkaOutboundHeaders | undefined): IHeaders | undefined {
  if (!headers) return undefined;
  const copy: IHeaders = {};
  for (const [name, value] of Object.entries(headers)) copy[name] = value;
  return copy;
}

function decodeHeaders(headers: IHeaders | undefined): KafkaHeaders {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last === undefined) continue;
    decoded[name] = Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
  }
  return decoded;
}

// --------------------------------------------------------------------------------------------
// Consumer

/** Longest wait of a fetch for new records, as in the platformatic adapter. */
const POLL_INTERVAL_MS = 500;

class KafkajsConsumer implements KafkaConsumer {
  readonly #consumer: Consumer;
  readonly #options: KafkaConsumerOptions;
  #handlers: KafkaConsumerHandlers | undefined;
  #assigned: KafkaTopicPartition[] = [];
  /** Partitions paused by the caller (kafkajs' own pause list is per topic-partition too). */
  readonly #paused = new Set<string>();
  /** Partitions whose in-progress batch must stop (seek or pause) before the next record. */
  readonly #interrupted = new Set<string>();
  /** Next offset to hand out per partition (last delivered + 1, or the seek target). */
  readonly #position = new Map<string, string>();
  #closed = false;
  readonly #heartbeatIntervalMs: number;
  readonly #timers: RunnerTimers;
  /**
   * Set when a heartbeat says this member is fenced (rebalance, expelled): no batch hands out
   * another record until the member rejoined.
   */
  #fenced: Error | undefined;

  constructor(kafka: Kafka, options: KafkaConsumerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? REAL_RUNNER_TIMERS;
    const sessionTimeout = options.sessionTimeoutMs ?? 10_000;
    this.#heartbeatIntervalMs = Math.max(500, Math.floor(sessionTimeout / 5));
    this.#consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout,
      ...(options.rebalanceTimeoutMs !== undefined
        ? { rebalanceTimeout: options.rebalanceTimeoutMs }
        : {}),
      heartbeatInterval: this.#heartbeatIntervalMs,
      allowAutoTopicCreation: false,
      // A fetch waits at most this long for new records (kafkajs' default is 5 s): a resume or
      // seek only takes effect with the next fetch, and disconnect() waits for the one in flight.
      maxWaitTimeInMs: POLL_INTERVAL_MS,
      retry: {
        retries: 8,
        initialRetryTime: 200,
        maxRetryTime: 5_000,
        restartOnFailure: async () => !this.#closed,
      },
    });
  }

  async start(handlers: KafkaConsumerHandlers): Promise<void> {
    this.#handlers = handlers;
    const consumer = this.#consumer;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const next: KafkaTopicPartition[] = [];
      for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
        for (const partition of partitions) next.push({ topic, partition });
      }
      const before = new Set(this.#assigned.map((tp) => partitionKey(tp.topic, tp.partition)));
      const after = new Set(next.map((tp) => partitionKey(tp.topic, tp.partition)));
      const revoked = this.#assigned.filter(
        (tp) => !after.has(partitionKey(tp.topic, tp.partition)),
      );
      const added = next.filter((tp) => !before.has(partitionKey(tp.topic, tp.partition)));
      this.#assigned = next;
      this.#fenced = undefined;
      // After a join kafkajs fetches again from the committed offsets: forget local positions.
      this.#position.clear();
      this.#interrupted.clear();
      if (revoked.length > 0) safely(() => handlers.onRevoked?.(revoked));
      if (added.length > 0) safely(() => handlers.onAssigned?.(added));
    });
    consumer.on(consumer.events.FETCH, () => safely(() => handlers.onFetch?.()));
    consumer.on(consumer.events.CRASH, (event) =>
      safely(() => handlers.onError?.(event.payload.error)),
    );
    await consumer.connect();
    await consumer.subscribe({
      topics: [...this.#options.topics],
      fromBeginning: this.#options.fromBeginning ?? true,
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#options.partitionConcurrency ?? 8,
      eachBatch: (payload) => this.#eachBatch(payload),
    });
  }

  async #eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const key = partitionKey(batch.topic, batch.partition);
    // A batch fetched before a seek or pause is stale for that partition.
    this.#interrupted.delete(key);
    for (const message of batch.messages) {
      if (this.#closed || !payload.isRunning() || payload.isStale()) return;
      if (this.#paused.has(key) || this.#interrupted.has(key)) return;
      // Thrown, kafkajs' run loop rejoins the group (a returned batch would go on unfenced).
      if (this.#fenced !== undefined) throw this.#fenced;
      const expected = this.#position.get(key);
      if (expected !== undefined && BigInt(message.offset) < BigInt(expected)) continue;
      const record: KafkaInboundRecord = {
        topic: batch.topic,
        partition: batch.partition,
        offset: message.offset,
        key: message.key === null ? null : message.key.toString('utf8'),
        value: message.value,
        headers: decodeHeaders(message.headers),
        timestamp: message.timestamp,
      };
      this.#position.set(key, (BigInt(message.offset) + 1n).toString());
      // kafkajs heartbeats only between fetches: keep the membership alive while a handler
      // slower than the session timeout runs.
      const stopHeartbeats = this.#heartbeatEvery(payload);
      try {
        await this.#handlers!.onRecord(record);
      } catch (error) {
        safely(() => this.#handlers!.onError?.(error));
      } finally {
        stopHeartbeats();
      }
      // Tells kafkajs where the next fetch of this partition starts (nothing is committed).
      if (!this.#interrupted.has(key)) payload.resolveOffset(message.offset);
      await this.#heartbeat(payload);
    }
  }

  /** Heartbeats each heartbeat interval (on the timers seam) until the returned stop is called. */
  #heartbeatEvery(payload: EachBatchPayload): () => void {
    let timer: unknown;
    const tick = () => {
      timer = this.#timers.setTimeout(tick, this.#heartbeatIntervalMs);
      void this.#heartbeat(payload);
    };
    timer = this.#timers.setTimeout(tick, this.#heartbeatIntervalMs);
    return () => this.#timers.clearTimeout(timer);
  }

  /** Heartbeats (kafkajs sends one at most every heartbeat interval); notes a fenced member. */
  async #heartbeat(payload: EachBatchPayload): Promise<void> {
    try {
      await payload.heartbeat();
    } catch (error) {
      if (fencing(error)) this.#fenced ??= error as Error;
      else safely(() => this.#handlers?.onError?.(error));
    }
  }

  async commit(offsets: readonly KafkaCommitOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.#consumer.commitOffsets(
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset })),
    );
  }

  pause(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) this.#paused.add(partitionKey(tp.topic, tp.partition));
    this.#consumer.pause(groupByTopic(partitions));
  }

  resume(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      const key = partitionKey(tp.topic, tp.partition);
      this.#paused.delete(key);
      const position = this.#position.get(key);
      // Re-fetch from the first record not handed out; a batch fetched before the pause is stale.
      if (position !== undefined) this.seek({ ...tp, offset: position });
    }
    this.#consumer.resume(groupByTopic(partitions));
  }

  seek(position: KafkaCommitOffset): void {
    const key = partitionKey(position.topic, position.partition);
    this.#position.set(key, position.offset);
    this.#interrupted.add(key);
    this.#consumer.seek({
      topic: position.topic,
      partition: position.partition,
      offset: position.offset,
    });
  }

  assignment(): KafkaTopicPartition[] {
    return [...this.#assigned];
  }

  async close(): Promise<void> {
    this.#closed = true;
    // disconnect() waits for the fetch in flight and leaves the group; a broker that does not
    // answer must not hold the caller: the session timeout then frees the partitions.
    await waitAtMost(
      this.#consumer.disconnect().catch((error: unknown) => this.#handlers?.onError?.(error)),
      CLOSE_TIMEOUT_MS,
      this.#timers,
    );
  }
}

/** Longest wait of close() for kafkajs' disconnect. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Errors that mean this member's generation is over (a rebalance started, or the coordinator
 * expelled it): its commits fail and its partitions may be another member's already.
 */
function fencing(error: unknown): boolean {
  const type = (error as { type?: unknown }).type;
  return (
    type === 'REBALANCE_IN_PROGRESS' ||
    type === 'ILLEGAL_GENERATION' ||
    type === 'UNKNOWN_MEMBER_ID' ||
    type === 'FENCED_INSTANCE_ID'
  );
}

function groupByTopic(partitions: readonly KafkaTopicPartition[]) {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) {
    const list = byTopic.get(tp.topic) ?? [];
    list.push(tp.partition);
    byTopic.set(tp.topic, list);
  }
  return [...byTopic].map(([topic, list]) => ({ topic, partitions: list }));
}

function safely(callback: () => void): void {
  try {
    callback();
  } catch {
    // A throwing observer must not break the consumer.
  }
}

// --------------------------------------------------------------------------------------------
// Admin

/** Resolves once every partition of the topics has a leader (new topics take a moment). */
async function waitForLeaders(admin: Admin, topics: readonly string[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics: [...topics] });
      const ready = metadata.topics.every(
        (t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0),
      );
      if (ready && metadata.topics.length === topics.length) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`no leaders for ${topics.join(', ')} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function createAdmin(kafka: Kafka): Promise<KafkaAdmin> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  const topicConfigs = async (
    topic: string,
  ): Promise<{ all: Record<string, string>; dynamic: Record<string, string> }> => {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    });
    const all: Record<string, string> = {};
    const dynamic: Record<string, string> = {};
    for (const entry of described.resources[0]?.configEntries ?? []) {
      all[entry.configName] = entry.configValue;
      // configSource 1 = DYNAMIC_TOPIC_CONFIG: set on this topic, not inherited.
      if ((entry as { configSource?: number }).configSource === 1 || !entry.isDefault) {
        dynamic[entry.configName] = entry.configValue;
      }
    }
    return { all, dynamic };
  };
  return {
    async listTopics() {
      return (await admin.listTopics()).filter((name) => !name.startsWith('__')).sort();
    },
    async createTopics(topics: readonly KafkaTopicSpec[]) {
      if (topics.length === 0) return;
      const created = await admin.createTopics({
        // kafkajs' own wait gives up on UNKNOWN_TOPIC_OR_PARTITION while the new topic propagates.
        waitForLeaders: false,
        topics: topics.map((t) => ({
          topic: t.topic,
          numPartitions: t.partitions,
          replicationFactor: t.replicationFactor ?? 1,
          configEntries: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
      // kafkajs answers false (no error) when a topic already existed.
      if (!created) {
        throw new Error(`topic already exists: ${topics.map((t) => t.topic).join(', ')}`);
      }
      await waitForLeaders(
        admin,
        topics.map((t) => t.topic),
      );
    },
    async describeTopics(topics: readonly string[]) {
      if (topics.length === 0) return [];
      const metadata = await admin.fetchTopicMetadata({ topics: [...topics] });
      const result: KafkaTopicDescription[] = [];
      for (const topic of topics) {
        const found = metadata.topics.find((t) => t.name === topic);
        if (!found) throw new Error(`topic '${topic}' does not exist`);
        result.push({
          topic,
          partitions: found.partitions.length,
          replicationFactor: found.partitions[0]?.replicas.length ?? 0,
          configs: (await topicConfigs(topic)).all,
        });
      }
      return result;
    },
    async createPartitions(topic, partitions) {
      await admin.createPartitions({ topicPartitions: [{ topic, count: partitions }] });
    },
    async alterTopicConfigs(topic, configs) {
      // kafkajs speaks the non-incremental AlterConfigs, which resets every config not sent:
      // send the topic's own settings together with the new ones.
      const { dynamic } = await topicConfigs(topic);
      const merged = { ...dynamic, ...configs };
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: topic,
            configEntries: Object.entries(merged).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    },
    async deleteTopics(topics) {
      const existing = new Set(await admin.listTopics());
      const present = topics.filter((t) => existing.has(t));
      if (present.length > 0) await admin.deleteTopics({ topics: present });
    },
    async deleteGroups(groupIds) {
      for (const groupId of groupIds) {
        await admin.deleteGroups([groupId]).catch((error: unknown) => {
          // GROUP_ID_NOT_FOUND: nothing to delete. kafkajs names the code only per group
          // (`error.groups[].error.type`); its message is a generic "Error in DeleteGroups".
          const codes = ((error as { groups?: { error?: { type?: string } }[] }).groups ?? []).map(
            (group) => group.error?.type ?? '',
          );
          const notFound =
            codes.length > 0
              ? codes.every((code) => code === 'GROUP_ID_NOT_FOUND')
              : /not.?found|does not exist/i.test(String((error as Error).message ?? error));
          if (!notFound) throw error;
        });
      }
    },
    async committedOffsets(groupId, topic) {
      const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
      const result = new Map<number, string>();
      for (const entry of offsets) {
        for (const p of entry.partitions) if (p.offset !== '-1') result.set(p.partition, p.offset);
      }
      return result;
    },
    async topicOffsets(topic) {
      // Right after a topic was created the broker may still answer NOT_LEADER for a moment.
      let offsets: Awaited<ReturnType<Admin['fetchTopicOffsets']>> | undefined;
      for (let attempt = 1; offsets === undefined; attempt++) {
        try {
          offsets = await admin.fetchTopicOffsets(topic);
        } catch (error) {
          if (attempt >= 10 || (error as { retriable?: unknown }).retriable !== true) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      return offsets
        .map((p) => ({ partition: p.partition, start: p.low, end: p.high }))
        .sort((a, b) => a.partition - b.partition);
    },
    close: () => admin.disconnect(),
  };
}
