/**
 * What one message can carry on each broker, written down once (UTF-8 bytes). The outbox writers
 * and the relay's publishers check against these (transport-limits.ts), the RabbitMQ runner fits
 * its copies of received messages into them (rabbitmq/copy-limits.ts).
 */

export const AMQP_LIMITS = Object.freeze({
  /**
   * AMQP 0-9-1 `shortstr`: one length byte. The properties evgen sets (messageId, type = the
   * event type, correlationId) and every header name are short strings.
   */
  shortStringBytes: 255,
  /**
   * The encoded header table (names, values and their type and length prefixes): amqplib
   * encodes it into a 64 KiB buffer, and the whole content header must fit one frame (RabbitMQ's
   * frame_max, 128 KiB).
   */
  headerTableBytes: 65_536,
  /** The body: RabbitMQ's default `max_message_size` since 4.0 (16 MiB; 128 MiB before). */
  bodyBytes: 16 * 1024 * 1024,
});

export const KAFKA_LIMITS = Object.freeze({
  /**
   * One record as the broker stores it, in a batch of its own: the broker's default
   * `message.max.bytes` (a topic's `max.message.bytes`), which applies to a whole record batch.
   */
  recordBatchBytes: 1_048_588,
  /** A record batch's fixed header (format v2). */
  batchOverheadBytes: 61,
  /** A record's own length, attributes, timestamp and offset deltas and length prefixes, at most. */
  recordOverheadBytes: 36,
  /** A header's two length prefixes, at most. */
  headerOverheadBytes: 10,
});
