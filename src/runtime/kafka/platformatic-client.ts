/**
 * evgen's Kafka interface on @platformatic/kafka 1.35.0 (maintained, pure TypeScript; 2.x needs
 * Node ≥ 22).
 *
 * - Partitioner: `compatibilityPartitioner` (murmur2 like the Java client); the library's
 *   default one is not Java-compatible.
 * - Producer: idempotent, acks = all, each send bounded by `timeoutMs`; one send at a time and a
 *   new producer after a failed one (`serial-producer.ts`).
 * - Consumer: the library's message stream ends for good when a fetch fails (e.g. the broker
 *   restarted). The adapter re-creates the stream, and the whole client if that fails, until
 *   `close()`. The library has no per-partition pause: the adapter stops handing out records of a
 *   paused partition and, on resume or seek, points the stream's fetch position back at the first
 *   record not handed out.
 */
import {
  Admin,
  compatibilityPartitioner,
  ConfigResourceTypes,
  Consumer,
  IncrementalAlterConfigOperationTypes,
  MessagesStreamFallbackModes,
  MessagesStreamModes,
  ProduceAcks,
  Producer,
  type Message,
  type MessagesStream,
} from '@platformatic/kafka';
import {
  checkProducerOptions,
  partitionKey,
  type KafkaAdmin,
  type KafkaClient,
  type KafkaCommitOffset,
  type KafkaConnection,
  type KafkaConsumer,
  type KafkaConsumerHandlers,
  type KafkaConsumerOptions,
  type KafkaInboundRecord,
  type KafkaOutboundHeaders,
  type KafkaProducer,
  type KafkaProducerOptions,
  type KafkaTopicDescription,
  type KafkaTopicPartition,
} from './kafka-client.js';
import { serialProducer } from './serial-producer.js';
import { withTopicLookup } from './topic-lookup.js';
import { REAL_RUNNER_TIMERS, type RunnerTimers } from '../delivery/runner-timers.js';
import { sleep, waitAtMost } from '../sleep.js';

/** Client-level retries: reconnects and metadata refreshes keep going across a broker restart. */
const CLIENT_RETRIES = 20;
const CLIENT_RETRY_DELAY_MS = 500;

export function platformaticClient(connection: KafkaConnection): KafkaClient {
  const base = {
    clientId: connection.clientId ?? 'evgen',
    bootstrapBrokers: [...connection.brokers],
    retries: CLIENT_RETRIES,
    retryDelay: CLIENT_RETRY_DELAY_MS,
    autocreateTopics: false,
    ...(connection.requestTimeoutMs === undefined
      ? {}
      : { requestTimeout: connection.requestTimeoutMs }),
  };
  return {
    name: 'platformatic',
    producer: async (options) =>
      withTopicLookup(await createProducer(base, options), async () =>
        createAdmin(new Admin(base)),
      ),
    consumer: (options) => new PlatformaticConsumer(base, options),
    admin: async () => createAdmin(new Admin(base)),
  };
}

type BaseOptions = {
  clientId: string;
  bootstrapBrokers: string[];
  retries: number;
  retryDelay: number;
  autocreateTopics: boolean;
  requestTimeout?: number;
};

// --------------------------------------------------------------------------------------------
// Producer

/** Java's partition for a key: murmur2 of the UTF-8 bytes, positive, modulo the partition count. */
function keyPartition(key: string, partitionCount: number): number {
  const hash = compatibilityPartitioner({ topic: '' }, Buffer.from(key, 'utf8'));
  return hash % partitionCount;
}

async function createProducer(
  base: BaseOptions,
  options: KafkaProducerOptions = {},
): Promise<KafkaProducer> {
  const { acks, idempotent, timeoutMs } = checkProducerOptions(options);
  const connect = async () => {
    const created = new Producer({
      ...base,
      clientId: options.clientId ?? base.clientId,
      idempotent,
      acks:
        acks === 'all'
          ? ProduceAcks.ALL
          : acks === 'leader'
            ? ProduceAcks.LEADER
            : ProduceAcks.NO_RESPONSE,
      partitioner: compatibilityPartitioner,
      timeout: timeoutMs,
    });
    // Connects and, for an idempotent producer, obtains its producer id before the first send.
    await created.metadata({ topics: [] }).catch((error: unknown) => {
      void created.close().catch(() => undefined);
      throw error;
    });
    return created;
  };
  // One send at a time, a new producer after a failed one (see serial-producer.ts). The library's
  // concurrent idempotent sends were also measured acknowledged while the broker stored only
  // one of them (10 concurrent sends → 1 record); after a broker restart its producer was seen
  // to stay stuck (every send timing out for minutes) until replaced.
  const serial = await serialProducer<Producer>(
    {
      connect,
      // Bounded by the serial producer (connect included); the library's own bound is `timeout`.
      send: async (producer, records) => {
        await producer.send({
          messages: records.map((record) => ({
            topic: record.topic,
            key: Buffer.from(record.key, 'utf8'),
            value: Buffer.isBuffer(record.value) ? record.value : Buffer.from(record.value, 'utf8'),
            headers: headerMap(record.headers),
          })),
        });
      },
      close: (producer) => producer.close(),
    },
    timeoutMs,
  );
  return {
    send: serial.send,
    probe: serial.probe,
    partitionFor: keyPartition,
    close: serial.close,
  };
}

function headerMap(headers: KafkaOutboundHeaders | undefined): Map<Buffer, Buffer> {
  const map = new Map<Buffer, Buffer>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    map.set(Buffer.from(name, 'utf8'), Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'));
  }
  return map;
}

// --------------------------------------------------------------------------------------------
// Consumer

interface PartitionState {
  /**
   * Offset of the next record to take from the stream: after the last one queued, or where a
   * seek, pause or resume put it. Undefined after an assignment until the stream's refresh tells
   * where it starts (the group's committed offset).
   */
  next?: bigint;
  /** A record seen ahead of `next`, and the fetch response it came in (see #accept). */
  hole?: { readonly seen: bigint; readonly response: number };
  /** Records taken from the stream, not handed out yet, in offset order. */
  queue: Message[];
  running: boolean;
}

/** Buffered records across partitions above which the stream stops fetching. */
const HIGH_WATER = 500;

/**
 * The library's stream fetches every assigned partition forward from its own position, which
 * the adapter re-points for seek/resume. Its invariant: records are handed out per partition in
 * offset order with nothing skipped. A record ahead of the expected offset (from a fetch issued
 * before a re-point, or before a rebalance) is dropped and the stream pointed back; only when the
 * same record comes first in a later response, fetched from the expected offset, are the
 * offsets in between taken as absent (compaction, transaction markers). A rebalance keeps what
 * was queued for partitions this member keeps: the stream may go on from its fetch position.
 */
class PlatformaticConsumer implements KafkaConsumer {
  readonly #base: BaseOptions;
  readonly #options: KafkaConsumerOptions;
  #consumer: Consumer | undefined;
  #stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  #handlers: KafkaConsumerHandlers | undefined;
  readonly #partitions = new Map<string, PartitionState>();
  readonly #paused = new Set<string>();
  #assigned: KafkaTopicPartition[] = [];
  readonly #assignedKeys = new Set<string>();
  /** Fetch responses seen (any stream of this consumer). */
  #responses = 0;
  #buffered = 0;
  #active = 0;
  /** Partition drains running (handing records out). */
  #draining = 0;
  readonly #waiting: (() => void)[] = [];
  #closed = false;
  #restarting: Promise<void> | undefined;
  /** Aborted by close(): ends the backoff wait of a restart at once. */
  readonly #closing = new AbortController();
  readonly #timers: RunnerTimers;
  readonly #idle = new Set<() => void>();

  constructor(base: BaseOptions, options: KafkaConsumerOptions) {
    this.#base = base;
    this.#options = options;
    this.#timers = options.timers ?? REAL_RUNNER_TIMERS;
  }

  async start(handlers: KafkaConsumerHandlers): Promise<void> {
    this.#handlers = handlers;
    await this.#open();
  }

  #newConsumer(): Consumer {
    const sessionTimeout = this.#options.sessionTimeoutMs ?? 10_000;
    const consumer = new Consumer({
      ...this.#base,
      clientId: this.#options.clientId ?? this.#base.clientId,
      groupId: this.#options.groupId,
      sessionTimeout,
      heartbeatInterval: Math.max(500, Math.floor(sessionTimeout / 5)),
      rebalanceTimeout: this.#options.rebalanceTimeoutMs ?? Math.max(sessionTimeout, 30_000),
      autocommit: false,
      maxWaitTime: 500,
    });
    consumer.on('consumer:group:join', (payload) => this.#onJoin(payload.assignments ?? []));
    consumer.on('consumer:heartbeat:error', (payload) => this.#report(payload.error));
    return consumer;
  }

  async #open(): Promise<void> {
    const consumer = (this.#consumer ??= this.#newConsumer());
    const stream = await consumer.consume({
      topics: [...this.#options.topics],
      mode: MessagesStreamModes.COMMITTED,
      fallbackMode:
        this.#options.fromBeginning === false
          ? MessagesStreamFallbackModes.LATEST
          : MessagesStreamFallbackModes.EARLIEST,
      autocommit: false,
      maxWaitTime: 500,
    });
    if (this.#closed) {
      // A restart that outlived close(): nothing of it may stay open.
      await stream.close().catch(() => undefined);
      await forceClose(consumer);
      return;
    }
    this.#stream = stream;
    // Emitted before a response's records are pushed: tells responses apart (see #accept).
    stream.on('fetch', () => {
      this.#responses += 1;
      safely(() => this.#handlers?.onFetch?.());
    });
    // After a (re)join the stream restarts kept partitions at the group's committed offset:
    // point them at what this member already has instead of fetching it again.
    stream.on('offsets', () => {
      for (const [key, state] of this.#partitions) {
        if (state.next !== undefined) stream.offsetsToFetch.set(key, state.next);
      }
    });
    stream.on('data', (message) => this.#onMessage(stream, message));
    stream.on('error', (error) => this.#onStreamEnd(stream, error));
    stream.on('close', () => this.#onStreamEnd(stream, undefined));
  }

  /** The stream ended without close(): re-create it (and the client if that fails) with backoff. */
  #onStreamEnd(stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>, error: unknown): void {
    if (error !== undefined) this.#report(error);
    if (this.#closed || stream !== this.#stream || this.#restarting) return;
    this.#stream = undefined;
    this.#restarting = (async () => {
      let delay = 250;
      while (!this.#closed) {
        await sleep(delay, this.#closing.signal, this.#timers);
        if (this.#closed) break;
        try {
          await this.#open();
          break;
        } catch (openError) {
          this.#report(openError);
          // The client itself may be stuck (e.g. lost its group for good): start a fresh one.
          const broken = this.#consumer;
          this.#consumer = undefined;
          if (broken) await forceClose(broken);
          delay = Math.min(delay * 2, 5_000);
        }
      }
    })().finally(() => (this.#restarting = undefined));
  }

  #onJoin(assignments: readonly { topic: string; partitions: number[] }[]): void {
    const next: KafkaTopicPartition[] = [];
    for (const assignment of assignments) {
      for (const partition of assignment.partitions)
        next.push({ topic: assignment.topic, partition });
    }
    const before = this.#assignedKeys;
    const after = new Set(next.map((tp) => partitionKey(tp.topic, tp.partition)));
    const revoked = this.#assigned.filter((tp) => !after.has(partitionKey(tp.topic, tp.partition)));
    const added = next.filter((tp) => !before.has(partitionKey(tp.topic, tp.partition)));
    // Revoked partitions: their records are the next owner's. Added ones start afresh at the
    // group's committed offset. Kept ones keep their queue and position.
    for (const tp of [...revoked, ...added]) {
      const key = partitionKey(tp.topic, tp.partition);
      const state = this.#partitions.get(key);
      if (state) this.#unbuffer(state.queue.splice(0).length);
      this.#partitions.delete(key);
      this.#paused.delete(key);
    }
    this.#assigned = next;
    this.#assignedKeys.clear();
    for (const key of after) this.#assignedKeys.add(key);
    const handlers = this.#handlers;
    if (revoked.length > 0) safely(() => handlers?.onRevoked?.(revoked));
    if (added.length > 0) safely(() => handlers?.onAssigned?.(added));
  }

  #state(key: string): PartitionState {
    let state = this.#partitions.get(key);
    if (!state) {
      state = { queue: [], running: false };
      this.#partitions.set(key, state);
    }
    return state;
  }

  #onMessage(stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>, message: Message): void {
    const key = partitionKey(message.topic, message.partition);
    // Not (or no longer) this member's, or paused: resume() re-reads from the position.
    if (!this.#assignedKeys.has(key) || this.#paused.has(key)) return;
    const state = this.#state(key);
    // A partition assigned afresh starts where the stream's refresh after the join put it (the
    // group's committed offset); a record before that refresh is from a fetch issued earlier.
    if (state.next === undefined) {
      const start = stream.offsetsCommitted.get(key);
      if (start === undefined) return;
      state.next = start;
    }
    if (!this.#accept(key, state, message.offset)) return;
    state.queue.push(message);
    this.#buffered += 1;
    if (this.#buffered >= HIGH_WATER) this.#stream?.pause();
    void this.#drain(key, state);
  }

  /**
   * Whether the record at `offset` is the next one of the partition. Runs while the library
   * pushes a response, before it issues the next fetch, so a re-point here is what that fetch
   * asks for.
   */
  #accept(key: string, state: PartitionState, offset: bigint): boolean {
    const expected = state.next!;
    if (offset < expected) return false; // already taken
    if (offset > expected) {
      const hole = state.hole;
      const confirmed =
        hole !== undefined && hole.seen === offset && hole.response < this.#responses;
      if (!confirmed) {
        if (hole === undefined || hole.response !== this.#responses)
          state.hole = { seen: offset, response: this.#responses };
        this.#stream?.offsetsToFetch.set(key, expected);
        return false;
      }
    }
    state.hole = undefined;
    state.next = offset + 1n;
    return true;
  }

  /** Hands a partition's queued records to the handler one by one, in offset order. */
  async #drain(key: string, state: PartitionState): Promise<void> {
    if (state.running) return;
    state.running = true;
    this.#draining += 1;
    try {
      while (state.queue.length > 0 && !this.#closed && !this.#paused.has(key)) {
        const message = state.queue.shift()!;
        this.#unbuffer(1);
        await this.#slot();
        try {
          await this.#handlers!.onRecord(toInbound(message));
        } catch (error) {
          this.#report(error);
        } finally {
          this.#release();
        }
      }
    } finally {
      state.running = false;
      this.#draining -= 1;
      if (this.#draining === 0) for (const notify of this.#idle) notify();
    }
  }

  /** Records left the queues: let the stream fetch again once they are mostly handed out. */
  #unbuffer(count: number): void {
    this.#buffered -= count;
    if (this.#buffered < HIGH_WATER / 2 && this.#stream?.isPaused()) this.#stream.resume();
  }

  #slot(): Promise<void> {
    const limit = this.#options.partitionConcurrency ?? 8;
    if (this.#active < limit) {
      this.#active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#waiting.push(() => resolve()));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active -= 1;
  }

  async commit(offsets: readonly KafkaCommitOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    const consumer = this.#consumer;
    if (!consumer) throw new Error('the Kafka consumer is not connected (restarting)');
    await consumer.commit({
      offsets: offsets.map((o) => ({
        topic: o.topic,
        partition: o.partition,
        offset: BigInt(o.offset),
        leaderEpoch: -1,
      })),
    });
  }

  pause(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      const key = partitionKey(tp.topic, tp.partition);
      this.#paused.add(key);
      // Queued records were not handed out: the position goes back to the first of them.
      const state = this.#partitions.get(key);
      const first = state?.queue[0];
      if (state && first) {
        state.next = first.offset;
        this.#unbuffer(state.queue.splice(0).length);
      }
    }
  }

  resume(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      const key = partitionKey(tp.topic, tp.partition);
      if (!this.#paused.delete(key)) continue;
      const state = this.#partitions.get(key);
      // Records that came while paused were dropped: fetch again from the position.
      if (state?.next !== undefined) this.#pointAt(key, state, state.next);
    }
  }

  seek(position: KafkaCommitOffset): void {
    const key = partitionKey(position.topic, position.partition);
    this.#pointAt(key, this.#state(key), BigInt(position.offset));
  }

  #pointAt(key: string, state: PartitionState, offset: bigint): void {
    // Queued records are behind or ahead of the new position: drop them.
    this.#unbuffer(state.queue.splice(0).length);
    state.next = offset;
    state.hole = undefined;
    this.#stream?.offsetsToFetch.set(key, offset);
  }

  assignment(): KafkaTopicPartition[] {
    return [...this.#assigned];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A restart waiting out its backoff (up to 5 s) gives up now.
    this.#closing.abort();
    for (const state of this.#partitions.values()) this.#unbuffer(state.queue.splice(0).length);
    if (this.#draining > 0) await new Promise<void>((resolve) => this.#idle.add(resolve));
    // At most CLOSE_TIMEOUT_MS for the leave and for a restart in progress together: re-opening
    // the stream joins the group again (it waits for the group's rebalance, and the library
    // retries it 20 times while the broker is gone). The client is closed before the restart is
    // awaited; what a restart opens after that is closed by the restart itself (#open).
    await waitAtMost(
      (async () => {
        await this.#closeClient();
        await this.#restarting;
      })(),
      CLOSE_TIMEOUT_MS,
      this.#timers,
    );
  }

  /** Stops the stream and leaves the group. */
  async #closeClient(): Promise<void> {
    const stream = this.#stream;
    const consumer = this.#consumer;
    this.#stream = undefined;
    this.#consumer = undefined;
    await stream?.close().catch(() => undefined);
    if (consumer !== undefined) await forceClose(consumer);
  }

  #report(error: unknown): void {
    safely(() => this.#handlers?.onError?.(error));
  }
}

function toInbound(message: Message): KafkaInboundRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of message.headers) {
    headers[name.toString('utf8')] = value === undefined ? '' : value.toString('utf8');
  }
  return {
    topic: message.topic,
    partition: message.partition,
    offset: message.offset.toString(),
    key: message.key === undefined || message.key === null ? null : message.key.toString('utf8'),
    value: message.value ?? null,
    headers,
    timestamp: message.timestamp.toString(),
  };
}

function safely(callback: () => void): void {
  try {
    callback();
  } catch {
    // A throwing observer must not break the consumer.
  }
}

/**
 * Longest wait of close() for the library's leave and close: a broker that does not answer (the
 * library retries the LeaveGroup 20 times) must not hold the caller; the session timeout then
 * frees the partitions.
 */
const CLOSE_TIMEOUT_MS = 5_000;

/** Closes a client without waiting for its in-flight requests; errors are irrelevant then. */
function forceClose(consumer: Consumer): Promise<void> {
  return new Promise((resolve) => consumer.close(true, () => resolve()));
}

// --------------------------------------------------------------------------------------------
// Admin

function createAdmin(admin: Admin): KafkaAdmin {
  const describeConfigs = async (topic: string): Promise<Record<string, string>> => {
    const [described] = await admin.describeConfigs({
      resources: [
        { resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: [] },
      ],
    });
    const configs: Record<string, string> = {};
    for (const entry of described?.configs ?? []) {
      if (typeof entry.value === 'string') configs[entry.name] = entry.value;
    }
    return configs;
  };
  return {
    async listTopics() {
      return (await admin.listTopics()).filter((name) => !name.startsWith('__')).sort();
    },
    async createTopics(topics) {
      // The library creates a list of topics with one shared partition count and config set.
      for (const t of topics) {
        await admin.createTopics({
          topics: [t.topic],
          partitions: t.partitions,
          replicas: t.replicationFactor ?? 1,
          configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
        });
      }
    },
    async describeTopics(topics) {
      if (topics.length === 0) return [];
      const metadata = await admin.metadata({ topics: [...topics], forceUpdate: true });
      const result: KafkaTopicDescription[] = [];
      for (const topic of topics) {
        const found = metadata.topics.get(topic);
        if (!found) throw new Error(`topic '${topic}' does not exist`);
        result.push({
          topic,
          partitions: found.partitionsCount,
          replicationFactor: found.partitions[0]?.replicas.length ?? 0,
          configs: await describeConfigs(topic),
        });
      }
      return result;
    },
    async createPartitions(topic, partitions) {
      await admin.createPartitions({
        topics: [{ name: topic, count: partitions, assignments: null }],
      });
    },
    async alterTopicConfigs(topic, configs) {
      await admin.incrementalAlterConfigs({
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: topic,
            configs: Object.entries(configs).map(([name, value]) => ({
              name,
              value: String(value),
              configOperation: IncrementalAlterConfigOperationTypes.SET,
            })),
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
      if (groupIds.length === 0) return;
      const known = await admin.listGroups();
      const present = groupIds.filter((id) => known.has(id));
      if (present.length > 0) await admin.deleteGroups({ groups: present });
    },
    async committedOffsets(groupId, topic) {
      const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
      const result = new Map<number, string>();
      for (const t of group?.topics ?? []) {
        if (t.name !== topic) continue;
        for (const p of t.partitions) {
          if (p.committedOffset >= 0n) result.set(p.partitionIndex, p.committedOffset.toString());
        }
      }
      return result;
    },
    async topicOffsets(topic) {
      const metadata = await admin.metadata({ topics: [topic], forceUpdate: true });
      const found = metadata.topics.get(topic);
      if (!found) throw new Error(`topic '${topic}' does not exist`);
      const partitions = Array.from({ length: found.partitionsCount }, (_, index) => index);
      // ListOffsets timestamps: -2 = earliest (low watermark), -1 = latest (high watermark).
      const ask = async (timestamp: bigint) => {
        const [listed] = await admin.listOffsets({
          topics: [
            {
              name: topic,
              partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })),
            },
          ],
        });
        return new Map(
          (listed?.partitions ?? []).map((p) => [p.partitionIndex, p.offset.toString()]),
        );
      };
      const [start, end] = await Promise.all([ask(-2n), ask(-1n)]);
      return partitions.map((partition) => ({
        partition,
        start: start.get(partition) ?? '0',
        end: end.get(partition) ?? '0',
      }));
    },
    close: () => admin.close(),
  };
}
