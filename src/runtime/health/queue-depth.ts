/**
 * What a broker holds for one consumer, read from the operator's side: messages waiting in its
 * work queue, its retry queues or topics, and its dead letters. The runtime cannot see these from
 * a delivery (a dead letter is never delivered to the consumer again), so a source asks the
 * broker at each scrape: `rabbitMqQueueDepths` (passive queue declarations) and
 * `kafkaQueueDepths` (end offsets against committed offsets). `createPrometheusMetrics` serves
 * them through `watchQueueDepths`, in the service's `/metrics` or in a small exporter of its own.
 */

/** The part a queue or topic plays for its consumer (the `role` label). */
export type QueueRole = 'work' | 'retry' | 'dead_letter';

export interface QueueDepth {
  /** The queue's or the topic's name (bounded: the consumer's own routes). */
  readonly queue: string;
  readonly role: QueueRole;
  /**
   * Messages waiting: RabbitMQ's ready count (not the unacked ones); for a Kafka topic the records
   * after the reading group's committed offsets (after the first stored offset when none).
   */
  readonly messages: number;
  /** Consumers attached to the queue, where the broker says (RabbitMQ). */
  readonly consumers?: number;
}

/** One consumer's queues or topics, read when asked. */
export interface QueueDepthSource {
  /** The consumer's name: the `consumer` label (as in `watchConsumer`). */
  readonly consumer: string;
  /** Reads the broker now; rejects when it cannot (the scrape then reports the source down). */
  depths(): Promise<readonly QueueDepth[]>;
}
