/**
 * Records of one Kafka partition handled concurrently: a key's records one after the other in
 * offset order, other keys beside them, a bound per partition, and a hold (seek back) that leaves
 * the records behind it for the redelivery and never seeks past an earlier held record.
 */
import { describe, expect, it } from 'vitest';
import { PartitionHolds } from '../../src/runtime/kafka/consumer/partition-holds.js';
import { PartitionLanes } from '../../src/runtime/kafka/consumer/partition-lanes.js';
import type { KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { manualTimers } from '../outbox/support/dialects.js';
import { HELD_PARTITION, recordingConsumer } from './support/recording-consumer.js';

const tp = HELD_PARTITION;
const at = (offset: number, key: string | null, partition = 0) =>
  ({ ...tp, partition, offset: String(offset), key }) as KafkaInboundRecord;
/** Lets the promises already settled run their callbacks (no time passes). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('partition lanes', () => {
  it("starts other keys' records at once and a key's next record only after the one before it", async () => {
    const lanes = new PartitionLanes(8);
    const started: string[] = [];
    const a1 = await lanes.enter(at(1, 'a'));
    const b2 = await lanes.enter(at(2, 'b'));
    const a3 = await lanes.enter(at(3, 'a'));
    void a1.turn.then(() => started.push('a1'));
    void b2.turn.then(() => started.push('b2'));
    void a3.turn.then(() => started.push('a3'));
    await turn();
    expect(started).toEqual(['a1', 'b2']);
    b2.leave();
    await turn();
    expect(started).toEqual(['a1', 'b2']);
    a1.leave();
    await turn();
    expect(started).toEqual(['a1', 'b2', 'a3']);
  });

  it('lets at most `limit` records of a partition in; the next enters when one leaves; other partitions are not held up', async () => {
    const lanes = new PartitionLanes(2);
    const first = await lanes.enter(at(1, 'a'));
    await lanes.enter(at(2, 'b'));
    let third = false;
    const entering = lanes.enter(at(3, 'c')).then(() => (third = true));
    await lanes.enter(at(1, 'a', 1));
    await turn();
    expect(third).toBe(false);
    first.leave();
    await entering;
    expect(third).toBe(true);
  });

  it('forgets a partition once nothing of it runs or waits, and it enters anew later', async () => {
    const lanes = new PartitionLanes(8);
    const a = await lanes.enter(at(1, 'a'));
    const b = await lanes.enter(at(1, 'b', 1));
    expect(lanes.partitionsInUse).toBe(2);
    a.leave();
    expect(lanes.partitionsInUse).toBe(1);
    b.leave();
    expect(lanes.partitionsInUse).toBe(0);
    const again = await lanes.enter(at(2, 'a'));
    let started = false;
    void again.turn.then(() => (started = true));
    await turn();
    expect(started).toBe(true);
    again.leave();
    expect(lanes.partitionsInUse).toBe(0);
  });

  it('keeps the partition while a caller it woke is about to enter: a later record of the key still waits its turn', async () => {
    const lanes = new PartitionLanes(1);
    const first = await lanes.enter(at(1, 'a'));
    const secondEntering = lanes.enter(at(2, 'a'));
    first.leave(); // running 0, the waiting caller is woken
    const second = await secondEntering;
    const third = await Promise.race([
      lanes.enter(at(3, 'a')).then(() => 'entered'),
      turn().then(() => 'waiting'),
    ]);
    expect(third).toBe('waiting');
    await second.turn;
    second.leave();
    expect(lanes.partitionsInUse).toBe(1); // the third record entered on the woken state
  });

  it('a hold overtakes the records entered before it at or after its offset, not those before it or entered after it', async () => {
    const lanes = new PartitionLanes(8);
    const before = await lanes.enter(at(4, 'a'));
    const held = await lanes.enter(at(5, 'b'));
    const behind = await lanes.enter(at(6, 'b'));
    const other = await lanes.enter(at(7, 'c'));
    lanes.held(tp, '5');
    const again = await lanes.enter(at(5, 'b'));
    expect([before, held, behind, other, again].map((ticket) => ticket.overtaken())).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });
});

describe('partition holds with concurrent records', () => {
  function holdsOn(calls: string[]) {
    const consumer = recordingConsumer(calls);
    const time = manualTimers();
    const holds = new PartitionHolds(
      () => consumer,
      () => true,
      (error) => {
        throw error;
      },
      time.timers,
    );
    holds.assigned([tp], true);
    return { holds, time };
  }

  it('never seeks past an earlier held record, and resumes at its time', () => {
    const calls: string[] = [];
    const { holds, time } = holdsOn(calls);
    holds.hold(at(5, 'a'), 1_000);
    holds.hold(at(8, 'b'), 10);
    expect(calls).toEqual(['pause orders:0', 'seek 5']);
    time.advance(10);
    expect(calls).toHaveLength(2);
    time.advance(990);
    expect(calls).toEqual(['pause orders:0', 'seek 5', 'resume orders:0']);
    // Resumed: the next hold seeks wherever it is.
    holds.hold(at(9, 'a'), 10);
    expect(calls.slice(3)).toEqual(['pause orders:0', 'seek 9']);
  });

  it('seeks back further for an earlier record, and a hold without delay waits for the breaker', () => {
    const calls: string[] = [];
    const { holds, time } = holdsOn(calls);
    holds.hold(at(8, 'b'), 10);
    holds.hold(at(5, 'a'), 10);
    expect(calls).toEqual(['pause orders:0', 'seek 8', 'pause orders:0', 'seek 5']);
    holds.hold(at(6, 'c'), undefined);
    time.advance(100);
    expect(calls).toHaveLength(4);
    holds.resumeAll();
    expect(calls.slice(4)).toEqual(['resume orders:0']);
  });
});
