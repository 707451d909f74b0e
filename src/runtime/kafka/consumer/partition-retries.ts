/**
 * What the Kafka runner remembers per partition about the record at its head between deliveries
 * of it: how often a `strict` event was retried in place (its attempt grows without a copy) and
 * how many settles in a row failed (the backoff before the next try). Both end when the record
 * settles, its partition is revoked or the runner starts again.
 */
import type { KafkaInboundRecord, KafkaTopicPartition } from '../kafka-client.js';
import { tpKey } from './partition-holds.js';

export class PartitionRetries {
  readonly #inPlace = new Map<string, { readonly offset: string; readonly retries: number }>();
  readonly #settleStreak = new Map<string, number>();

  /** In-place retries of this record so far (0 when its partition's head is another record). */
  inPlace(record: KafkaInboundRecord): number {
    const previous = this.#inPlace.get(tpKey(record));
    return previous?.offset === record.offset ? previous.retries : 0;
  }

  /** The record is retried in place once more. */
  retriedInPlace(record: KafkaInboundRecord): void {
    const retries = this.inPlace(record) + 1;
    this.#inPlace.set(tpKey(record), { offset: record.offset, retries });
  }

  /** A settle of the record failed; returns how many in a row failed on its partition. */
  settleFailed(record: KafkaInboundRecord): number {
    const key = tpKey(record);
    const streak = (this.#settleStreak.get(key) ?? 0) + 1;
    this.#settleStreak.set(key, streak);
    return streak;
  }

  /** The record settled: its partition's next record starts afresh. */
  settled(record: KafkaInboundRecord): void {
    const key = tpKey(record);
    if (this.#inPlace.get(key)?.offset === record.offset) this.#inPlace.delete(key);
    this.#settleStreak.delete(key);
  }

  /** The partitions were revoked: their next owner starts afresh. */
  forget(partitions: readonly KafkaTopicPartition[]): void {
    for (const tp of partitions) {
      this.#inPlace.delete(tpKey(tp));
      this.#settleStreak.delete(tpKey(tp));
    }
  }

  clear(): void {
    this.#inPlace.clear();
    this.#settleStreak.clear();
  }
}
