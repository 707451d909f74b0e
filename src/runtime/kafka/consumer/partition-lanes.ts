/**
 * Records of one partition handled concurrently, one lane per record key: a record starts only
 * after every earlier record of its partition with the same key has finished, records of other
 * keys run beside it, at most `limit` records per partition at once (the adapter's next record
 * waits for room, so a slow partition does not buffer without bound). Sequential per partition,
 * each record one inbox transaction after the other, capped the consumer at what one database
 * round trip chain allows per partition (measured: ~510 msg/s on 4 partitions).
 *
 * A hold (pause + seek back to a record, partition-holds.ts) makes the adapter deliver that record
 * and everything after it again. Records entered before the hold, at or after its offset and not
 * started yet are then overtaken: they are dropped (not handled, not settled) and come again after
 * the seek, behind the held record, so a key's records never overtake a held one. Records that
 * already started finish; their redelivered copies are duplicates the inbox absorbs, and the
 * committer never commits past a record that is not settled.
 */
import type { KafkaInboundRecord, KafkaTopicPartition } from '../kafka-client.js';
import { tpKey } from './partition-holds.js';

interface Partition {
  /** Records entered and not finished. */
  running: number;
  /** Adapter calls waiting for room. */
  readonly waiting: (() => void)[];
  /** The last record entered per key: the next one of that key starts after it. */
  readonly tails: Map<string, Promise<void>>;
  /** Holds since the oldest record still running: hold number and offset. */
  readonly holds: { readonly seq: number; readonly offset: bigint }[];
}

/** A record's place in its lane. */
export interface LaneTicket {
  /** Resolves when the record may start (the records of its key before it have finished). */
  readonly turn: Promise<void>;
  /** Whether a hold since the record entered sends it (and what follows) again: skip it. */
  overtaken(): boolean;
  /** The record finished (handled, settled, held or skipped). */
  leave(): void;
}

export class PartitionLanes {
  readonly #partitions = new Map<string, Partition>();
  #seq = 0;

  constructor(private readonly limit: number) {}

  /** Partitions with records running or waiting (the others are forgotten). */
  get partitionsInUse(): number {
    return this.#partitions.size;
  }

  /** Waits for room in the record's partition, then enters it in its key's lane. */
  async enter(record: KafkaInboundRecord): Promise<LaneTicket> {
    const key = tpKey(record);
    let partition = this.#partitions.get(key);
    if (partition === undefined) {
      partition = { running: 0, waiting: [], tails: new Map(), holds: [] };
      this.#partitions.set(key, partition);
    }
    const state = partition;
    while (state.running >= this.limit) await new Promise<void>((r) => state.waiting.push(r));
    state.running++;
    const seq = this.#seq;
    const offset = BigInt(record.offset);
    const lane = record.key ?? '';
    const before = state.tails.get(lane) ?? Promise.resolve();
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    state.tails.set(lane, done);
    let left = false;
    return {
      turn: before,
      overtaken: () => state.holds.some((hold) => hold.seq > seq && hold.offset <= offset),
      leave: () => {
        if (left) return;
        left = true;
        finished();
        if (state.tails.get(lane) === done) state.tails.delete(lane);
        state.running--;
        if (state.running === 0) state.holds.length = 0;
        const next = state.waiting.shift();
        if (next !== undefined) next();
        // Nothing running or waiting: forget the partition (its keys' tails are gone already), so
        // partitions revoked or no longer read leave nothing behind. Never while a woken caller
        // is about to enter: it holds this state and a second one would split the key's lane.
        else if (state.running === 0 && this.#partitions.get(key) === state)
          this.#partitions.delete(key);
      },
    };
  }

  /** The partition was held at `offset`: records entered before, at or after it, are overtaken. */
  held(tp: KafkaTopicPartition, offset: string): void {
    const partition = this.#partitions.get(tpKey(tp));
    if (partition === undefined || partition.running === 0) return;
    partition.holds.push({ seq: ++this.#seq, offset: BigInt(offset) });
  }
}
