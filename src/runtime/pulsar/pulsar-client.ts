/**
 * The small Pulsar transport interface evgen's producers, relay publisher and consumer runner are
 * written against. One adapter implements it today (`websocket-client.ts`: the broker's WebSocket
 * API over `ws`, pure JavaScript). The official `pulsar-client` package needs the native libpulsar
 * library, and the pure-JS binary-protocol client `pulsar-flex` sends no message key (so no
 * Key_Shared per-aggregate order), no dead-letter policy and ignores the initial position; a
 * binary-protocol client would be a second adapter of this interface.
 *
 * Only what evgen needs is here: keyed messages with string properties, sends acknowledged by the
 * broker, durable subscriptions (Key_Shared by default) with individual ack and negative ack, a
 * dead-letter policy, an initial position, and a bound on messages handed out and not yet
 * settled (back-pressure).
 */

/** Message properties: UTF-8 strings both ways (Pulsar has no binary properties). */
export type PulsarProperties = Readonly<Record<string, string>>;

/** One message to produce. */
export interface PulsarOutboundMessage {
  /**
   * The message key: Key_Shared subscriptions hand all messages of one key to one consumer, in
   * order; partitioned topics route by its hash. evgen uses the aggregate id.
   */
  readonly key: string;
  readonly payload: Buffer;
  readonly properties?: PulsarProperties;
  /**
   * Delayed delivery: the broker hands the message to Shared and Key_Shared subscriptions only
   * this many ms after it stored it (the broker's `delayedDeliveryEnabled`, on by default).
   */
  readonly deliverAfterMs?: number;
}

export interface PulsarProducer {
  /** The full topic name, `persistent://tenant/namespace/topic`. */
  readonly topic: string;
  /**
   * Resolves with the broker's message id once the broker stored the message; rejects when it
   * did not answer in time, refused it or the connection dropped (then the message may or may not
   * be stored: send again, consumers are idempotent). Messages sent on one producer are stored in
   * call order while no send fails; after a failure, await the earlier sends before resending.
   */
  send(message: PulsarOutboundMessage): Promise<string>;
  /**
   * Optional: resolves once the producer holds a working connection, reconnecting if it lost it
   * (the relay's probe during an outage); rejects when the broker cannot be reached.
   */
  ready?(): Promise<void>;
  close(): Promise<void>;
}

/** Pulsar's subscription types; evgen uses `Key_Shared` (per-key order over many consumers). */
export type PulsarSubscriptionType = 'Exclusive' | 'Failover' | 'Shared' | 'Key_Shared';

export interface PulsarConsumerOptions {
  /** Full topic names (`persistent://tenant/namespace/topic`); one subscription on each. */
  readonly topics: readonly string[];
  /** The durable subscription's name (evgen uses the consumer's name); it outlives the consumer. */
  readonly subscription: string;
  /** Default `Key_Shared`. */
  readonly subscriptionType?: PulsarSubscriptionType;
  /** Where a new subscription starts: `Earliest` (default, nothing published is missed) or `Latest`. */
  readonly initialPosition?: 'Earliest' | 'Latest';
  /**
   * At most this many messages per topic are handed to `onMessage` and not yet acked or nacked
   * (default 100): the broker sends more only as messages are settled.
   */
  readonly maxUnsettled?: number;
  /**
   * How many messages the broker sends ahead of `onMessage` at a time (default `maxUnsettled`, at
   * most 1 000): a reader holding more than this unsettled receives them in pages of this size.
   */
  readonly prefetch?: number;
  /** How long after a negative ack the broker redelivers the message (default 1 000 ms). */
  readonly negativeAckRedeliveryDelayMs?: number;
  /**
   * After `maxRedeliverCount` redeliveries, the broker's client moves the message to `topic`
   * (keeping key, payload and properties, adding `REAL_TOPIC`, `ORIGIN_MESSAGE_ID`) instead.
   */
  readonly deadLetter?: {
    /** Redeliveries (negative acks included) before the message goes to `topic`. */
    readonly maxRedeliverCount: number;
    /** Full name of the dead-letter topic. */
    readonly topic: string;
  };
  /** Shown in the broker's subscription stats. */
  readonly consumerName?: string;
}

/** One consumed message. */
export interface PulsarInboundMessage {
  /** The full topic name it was consumed from. */
  readonly topic: string;
  /** The broker's id, opaque; what `ack` and `nack` refer to. */
  readonly messageId: string;
  /** null when the producer set none. */
  readonly key: string | null;
  readonly payload: Buffer;
  readonly properties: PulsarProperties;
  /** Milliseconds since the epoch. */
  readonly publishTime: number;
  /** 0 on first delivery; counts negative acks and deliveries to consumers that closed. */
  readonly redeliveryCount: number;
}

export interface PulsarConsumerHandlers {
  /**
   * Called once per delivered message. A message is settled only by `ack` or `nack`; until then
   * it counts against `maxUnsettled` and is redelivered if this consumer closes or disconnects.
   */
  onMessage(message: PulsarInboundMessage): void;
  /** A connection error the adapter recovers from by itself (it reconnects with backoff). */
  onError?(error: unknown): void;
}

export interface PulsarConsumer {
  /** Subscribes on every topic; resolves once each subscription is established. */
  start(handlers: PulsarConsumerHandlers): Promise<void>;
  /** Acknowledges one message (it is not delivered again). */
  ack(message: PulsarInboundMessage): void;
  /** Asks for redelivery after `negativeAckRedeliveryDelayMs`; counts toward the dead-letter policy. */
  nack(message: PulsarInboundMessage): void;
  /**
   * Stops asking for messages (back-pressure while a dependency is down): no permit is returned
   * for messages settled meanwhile, so the broker stops sending once those handed out are used.
   */
  pause(): void;
  /** Asks for messages again: returns the permits withheld since `pause`. */
  resume(): void;
  /** Closes the subscriptions' connections (the subscriptions stay); unsettled messages are redelivered. */
  close(): Promise<void>;
}

/** One Pulsar client route behind evgen's interface. */
export interface PulsarClient {
  /** `websocket`: for test names and logs. */
  readonly name: string;
  /** Resolves once the producer is connected to the topic. */
  producer(topic: string, options?: PulsarProducerOptions): Promise<PulsarProducer>;
  consumer(options: PulsarConsumerOptions): PulsarConsumer;
}

export interface PulsarProducerOptions {
  /** How long one send may wait for the broker's acknowledgement (default 30 000 ms). */
  readonly sendTimeoutMs?: number;
  /** Shown in the broker's topic stats. */
  readonly producerName?: string;
}

/** A Pulsar error: `retryable` when the broker may accept the same request later. */
export class PulsarClientError extends Error {
  readonly code = 'PulsarClientError';
  constructor(
    message: string,
    /** The broker did not answer, or the connection dropped: retrying later is the fix. */
    readonly unavailable: boolean,
  ) {
    super(message);
    this.name = 'PulsarClientError';
  }
  get retryable(): boolean {
    return this.unavailable;
  }
}

const TOPIC_NAME = /^(persistent|non-persistent):\/\/([^/]+)\/([^/]+)\/([^/]+)$/;

/** The parts of a full topic name; throws a RangeError naming the expected form. */
export function parseTopicName(topic: string): {
  readonly domain: 'persistent' | 'non-persistent';
  readonly tenant: string;
  readonly namespace: string;
  readonly local: string;
} {
  const match = TOPIC_NAME.exec(topic);
  if (!match) {
    throw new RangeError(
      `Pulsar topic '${topic}' is not a full name: expected persistent://<tenant>/<namespace>/<topic>`,
    );
  }
  return {
    domain: match[1] as 'persistent' | 'non-persistent',
    tenant: match[2]!,
    namespace: match[3]!,
    local: match[4]!,
  };
}
