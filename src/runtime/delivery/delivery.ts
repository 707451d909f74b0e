/**
 * A delivery as every transport hands it to the delivery core: the bytes, the transport's own
 * hints (messageId property/header, eventType header), the attempt it is, and where it came from.
 * Transports build one per received message; nothing in here knows a broker.
 */
import type { GapClock } from './gap-wait.js';

/** Which transport delivered a message. */
type TransportName = 'rabbitmq' | 'kafka' | 'pulsar' | 'in-process';

/** Where a delivery came from: what a handler may read as `ctx.delivery`. */
export interface DeliveryFacts {
  readonly transport: TransportName;
  /** Kafka or Pulsar topic (a retry topic for a retry copy). */
  readonly topic?: string;
  /** RabbitMQ queue (the consumer's work queue). */
  readonly queue?: string;
  readonly partition?: number;
  /** Kafka offset, as a decimal string. */
  readonly offset?: string;
  /** Whether this is not the first time the message reaches this consumer (retry copy, redelivery). */
  readonly redelivered: boolean;
  /** The received headers as the transport has them (AMQP headers, Kafka headers). */
  readonly headers: Readonly<Record<string, unknown>>;
}

export interface Delivery {
  /** The message body (a Kafka record's value); `null` for a Kafka tombstone. */
  readonly body: Uint8Array | null;
  /** The messageId the transport carries beside the body (AMQP property, Kafka header), if any. */
  readonly messageId?: string;
  /** The eventType the transport carries beside the body (AMQP `type`, Kafka header), if any. */
  readonly eventType?: string;
  /**
   * The aggregate the transport names beside the body (Kafka headers), so a skipped record can
   * advance its aggregate's version without its body being parsed.
   */
  readonly aggregate?: AggregateHint;
  /** The traceId the transport carries beside the body, if any (dead letters keep it). */
  readonly traceId?: string;
  /** 1 for a first delivery; the transport reads it from its own (trusted) attempt header. */
  readonly attempt: number;
  /** The gap wait so far, when the message was parked before (the transport's trusted headers). */
  readonly gapClock?: GapClock | undefined;
  readonly facts: DeliveryFacts;
}

/** What a handler learns about the delivery it handles (`ctx.attempt`, `ctx.delivery`). */
export interface DeliveryContext {
  /** 1-based: 1 on the first delivery, n on the n-th attempt. */
  readonly attempt: number;
  readonly delivery: DeliveryFacts;
}

/** An aggregate as a transport's headers name it. */
export interface AggregateHint {
  readonly type: string;
  readonly id: string;
  /** The envelope's `aggregateVersion`, when it has one. */
  readonly version?: number;
}
