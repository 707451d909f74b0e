/**
 * The small Kafka transport interface evgen's producers, relay publisher, topic set-up and
 * consumer runner are written against. Two adapters implement it (`kafkajs-client.ts`,
 * `platformatic-client.ts`); tests loop over both against a real broker.
 *
 * Only what evgen needs is here: keyed records with string headers, acknowledged sends,
 * consumer groups with manual commits, per-partition pause/resume and seek, and topic admin.
 * Offsets are decimal strings (Kafka offsets are 64-bit; JavaScript numbers are not).
 */
import type { RunnerTimers } from '../delivery/runner-timers.js';

/** How many replicas must have the record before a send resolves. evgen always uses `all`. */
type KafkaAcks = 'all' | 'leader' | 'none';

/** Record headers as read: every value decoded as UTF-8. */
export type KafkaHeaders = Readonly<Record<string, string>>;

/**
 * Headers to write: UTF-8 strings, or raw bytes where a format needs them (the Spring Kafka
 * dead-letter headers carry big-endian integers).
 */
export type KafkaOutboundHeaders = Readonly<Record<string, string | Buffer>>;

/** One record to produce. */
export interface KafkaOutboundRecord {
  readonly topic: string;
  /**
   * Decides the partition (murmur2 of the UTF-8 key, like the Java client's default
   * partitioner) and therefore the order: records with one key stay in order.
   */
  readonly key: string;
  readonly value: Buffer | string;
  readonly headers?: KafkaOutboundHeaders;
}

/** Where a record is stored. */
interface KafkaRecordPosition {
  readonly topic: string;
  readonly partition: number;
  /** Decimal string. */
  readonly offset: string;
}

export interface KafkaProducerOptions {
  /** Default `all`. With `idempotent` (the default) only `all` is allowed. */
  readonly acks?: KafkaAcks;
  /**
   * Idempotent producer (default true): the broker drops duplicates of the producer's own
   * network retries and keeps one key's records in order across them. It removes no other
   * duplicate (a relay crash still publishes twice; the inbox absorbs that).
   */
  readonly idempotent?: boolean;
  /** Client id shown in broker logs. */
  readonly clientId?: string;
  /**
   * How long one send may wait for acknowledgement before it rejects (default 30 000 ms),
   * connecting a new client producer after a failed send included.
   */
  readonly timeoutMs?: number;
}

export interface KafkaProducer {
  /**
   * Sends the records (any topics, any keys) and resolves once the broker acknowledged every one
   * of them according to `acks`. Rejects when any is not acknowledged; then any subset may have
   * been stored (send again: consumers are idempotent). Records with the same key and topic are
   * stored in their input order, also across the client's own retries (idempotence).
   */
  send(records: readonly KafkaOutboundRecord[]): Promise<void>;
  /**
   * Resolves once the producer is connected, connecting a new one if the last send failed (sends
   * queue behind it); rejects after `timeoutMs` like a send. The outbox relay probes with it
   * during an outage to notice the broker's return. Optional for other implementations of this
   * interface.
   */
  probe?(): Promise<void>;
  /** The partition the client picks for `key` on a topic with `partitionCount` partitions. */
  partitionFor(key: string, partitionCount: number): number;
  /**
   * Whether the broker has `topic`, from its metadata, without creating it. The relay's publisher
   * asks before a topic's first send (destination-presence.ts). Optional for other implementations.
   */
  topicExists?(topic: string): Promise<boolean>;
  close(): Promise<void>;
}

/** A topic-partition. */
export interface KafkaTopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** One consumed record. */
export interface KafkaInboundRecord extends KafkaRecordPosition {
  /** UTF-8 key; null when the record has none. */
  readonly key: string | null;
  /** Raw value; null for a tombstone. */
  readonly value: Buffer | null;
  /** Headers decoded as UTF-8 (a repeated header keeps its last value). */
  readonly headers: KafkaHeaders;
  /** Record timestamp, milliseconds since the epoch as a decimal string. */
  readonly timestamp: string;
}

/** A committed position: `offset` is the NEXT offset to read (last handled + 1). */
export interface KafkaCommitOffset extends KafkaTopicPartition {
  readonly offset: string;
}

export interface KafkaConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a group without a committed offset starts: `earliest` (default) or `latest`. */
  readonly fromBeginning?: boolean;
  readonly clientId?: string;
  /** Group session timeout (default 10 000 ms): a consumer silent this long loses its partitions. */
  readonly sessionTimeoutMs?: number;
  /**
   * How long a rebalance waits for this member to rejoin (kafkajs default 60 000 ms; platformatic
   * the larger of the session timeout and 30 000 ms). A kafkajs member rejoins only once its
   * records in flight are handled: this bounds the slowest handler, like the Java client's
   * `max.poll.interval.ms`.
   */
  readonly rebalanceTimeoutMs?: number;
  /** Partitions handled at the same time (default 8); one partition is always sequential. */
  readonly partitionConcurrency?: number;
  /**
   * Timers of the adapter's own waiting: its stream restarts' backoff, close()'s bound and
   * kafkajs' heartbeats during a slow handler (a runner passes its `timers` seam, so a test can
   * drive them). Default: the process's.
   */
  readonly timers?: RunnerTimers;
}

export interface KafkaConsumerHandlers {
  /**
   * Called once per record. Calls for one partition never overlap and come in offset order;
   * different partitions run concurrently. A record is not committed by returning: call
   * `commit()`. A rejection stops nothing: the adapter reports it through `onError` and moves on,
   * so handlers must catch what they mean to retry (evgen's runner does).
   */
  onRecord(record: KafkaInboundRecord): Promise<void>;
  /** Partitions newly assigned to this member (after a (re)join). */
  onAssigned?(partitions: readonly KafkaTopicPartition[]): void;
  /**
   * Partitions taken away. Records of them still being handled may finish, but their commits
   * can fail (another member owns them now); the inbox absorbs the redelivery.
   */
  onRevoked?(partitions: readonly KafkaTopicPartition[]): void;
  /** A client error the adapter recovers from by itself (broker gone, rejoin, …). */
  onError?(error: unknown): void;
  /**
   * A fetch request was answered (with records or none, or failed): the consumer's poll. The time
   * between two is its poll interval; it grows when handlers hold the loop (back-pressure) and
   * stops when the client is stuck, long before the group evicts the member.
   */
  onFetch?(): void;
}

export interface KafkaConsumer {
  /**
   * Joins the group and starts delivering records; resolves once the consumer runs. Recovers by
   * itself from broker restarts and rebalances until `close()`.
   */
  start(handlers: KafkaConsumerHandlers): Promise<void>;
  /** Commits positions (next offset to read). Resolves when the broker stored them. */
  commit(offsets: readonly KafkaCommitOffset[]): Promise<void>;
  /**
   * No record of these partitions is handed to `onRecord` after this returns (one already being
   * handled finishes). Pausing one partition never blocks the others.
   */
  pause(partitions: readonly KafkaTopicPartition[]): void;
  /**
   * Delivery continues at the partition's position: the offset after the last record handed to
   * `onRecord`, or where `seek()` put it.
   */
  resume(partitions: readonly KafkaTopicPartition[]): void;
  /** The next record delivered for the partition is the one at `offset` (decimal string). */
  seek(position: KafkaCommitOffset): void;
  /** Partitions currently assigned to this member. */
  assignment(): KafkaTopicPartition[];
  /**
   * Stops fetching, waits for records being handled, leaves the group. Gives up on the leave
   * after 5 s (a broker that does not answer): the session timeout then frees the partitions.
   */
  close(): Promise<void>;
}

/** A topic to create, or as described by the broker. */
export interface KafkaTopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** Default 1 (the test broker has one node). */
  readonly replicationFactor?: number;
  /** Topic configs, e.g. `retention.ms`, `cleanup.policy`. */
  readonly configs?: Readonly<Record<string, string>>;
}

export interface KafkaTopicDescription {
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  /** Every config the broker reports for the topic (defaults included). */
  readonly configs: Readonly<Record<string, string>>;
}

export interface KafkaAdmin {
  /** Names of every topic (internal ones excluded). */
  listTopics(): Promise<string[]>;
  /** Creates the topics; one that already exists is an error (`TopicExistsError` semantics). */
  createTopics(topics: readonly KafkaTopicSpec[]): Promise<void>;
  /** Describes existing topics; a missing one is an error. */
  describeTopics(topics: readonly string[]): Promise<KafkaTopicDescription[]>;
  /** Grows a topic to `partitions` (Kafka never shrinks one). */
  createPartitions(topic: string, partitions: number): Promise<void>;
  /** Sets the given configs of a topic (others unchanged). */
  alterTopicConfigs(topic: string, configs: Readonly<Record<string, string>>): Promise<void>;
  /** Deletes the topics; missing ones are ignored. */
  deleteTopics(topics: readonly string[]): Promise<void>;
  /** Deletes consumer groups; missing ones are ignored. */
  deleteGroups(groupIds: readonly string[]): Promise<void>;
  /** Committed offsets of a group for a topic (partition → next offset), absent when none. */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, string>>;
  /**
   * First and next offsets of every partition of a topic (low and high watermarks), sorted by
   * partition: for consumer lag and for reading a topic up to its current end.
   */
  topicOffsets(topic: string): Promise<KafkaPartitionOffsets[]>;
  close(): Promise<void>;
}

/** The offsets a partition holds: records `start` … `end - 1` (empty when equal). */
export interface KafkaPartitionOffsets {
  readonly partition: number;
  /** Offset of the first record still stored (low watermark), decimal string. */
  readonly start: string;
  /** Offset the next produced record gets (high watermark), decimal string. */
  readonly end: string;
}

/** Connection settings shared by every client of an adapter. */
export interface KafkaConnection {
  /** Bootstrap servers, `host:port`. */
  readonly brokers: readonly string[];
  readonly clientId?: string;
  /**
   * How long the client waits for one broker response before it gives up on that request (the
   * library retries it within the operation's own bounds). Default: the library's (30 s).
   */
  readonly requestTimeoutMs?: number;
}

/** One Kafka client library behind evgen's interface. */
export interface KafkaClient {
  /** `kafkajs` or `platformatic`: for test names and logs. */
  readonly name: string;
  /** Resolves once connected (metadata fetched), so a send right after does not race the connect. */
  producer(options?: KafkaProducerOptions): Promise<KafkaProducer>;
  consumer(options: KafkaConsumerOptions): KafkaConsumer;
  admin(): Promise<KafkaAdmin>;
}

/** `acks` as the wire number: all = -1, leader = 1, none = 0. */
export function acksNumber(acks: KafkaAcks): -1 | 0 | 1 {
  return acks === 'all' ? -1 : acks === 'leader' ? 1 : 0;
}

/** Refuses option combinations evgen never wants (an idempotent producer needs acks = all). */
export function checkProducerOptions(
  options: KafkaProducerOptions,
): Required<Pick<KafkaProducerOptions, 'acks' | 'idempotent' | 'timeoutMs'>> {
  const acks = options.acks ?? 'all';
  const idempotent = options.idempotent ?? true;
  if (idempotent && acks !== 'all') {
    throw new RangeError(`an idempotent producer needs acks = 'all' (got '${acks}')`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive integer (got ${timeoutMs})`);
  }
  return { acks, idempotent, timeoutMs };
}

/** `topic:partition`, the map key both adapters use. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}
