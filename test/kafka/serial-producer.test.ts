/**
 * The send discipline of both adapters' producers, with a fake client producer: one send in
 * flight at a time, and after a failed send (a timeout, a fatal sequence error) the next send
 * runs on a new client producer while the failed one is closed.
 */
import { describe, expect, it } from 'vitest';
import type { KafkaOutboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { serialProducer } from '../../src/runtime/kafka/serial-producer.js';

interface FakeSend {
  readonly producer: number;
  readonly keys: string[];
  settle(error?: Error): void;
}

function fakeLifecycle() {
  let connected = 0;
  const closed: number[] = [];
  const sends: FakeSend[] = [];
  return {
    closed,
    sends,
    connected: () => connected,
    lifecycle: {
      connect: async () => ++connected,
      send: (producer: number, records: readonly KafkaOutboundRecord[]) =>
        new Promise<void>((resolve, reject) => {
          sends.push({
            producer,
            keys: records.map((record) => record.key),
            settle: (error) => (error ? reject(error) : resolve()),
          });
        }),
      close: async (producer: number) => void closed.push(producer),
    },
  };
}

const record = (key: string): KafkaOutboundRecord => ({ topic: 't', key, value: key });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('serialProducer', () => {
  it('starts a send only after the previous one settled', async () => {
    const fake = fakeLifecycle();
    const producer = await serialProducer(fake.lifecycle);
    const first = producer.send([record('a')]);
    const second = producer.send([record('b')]);
    await tick();
    expect(fake.sends.map((send) => send.keys)).toEqual([['a']]);
    fake.sends[0]!.settle();
    await first;
    await tick();
    expect(fake.sends.map((send) => send.keys)).toEqual([['a'], ['b']]);
    fake.sends[1]!.settle();
    await second;
    expect(fake.connected()).toBe(1);
  });

  it('after a failed send, closes that producer and sends the next records on a new one', async () => {
    const fake = fakeLifecycle();
    const producer = await serialProducer(fake.lifecycle);
    const failed = producer.send([record('a')]);
    const next = producer.send([record('b')]);
    await tick();
    fake.sends[0]!.settle(new Error('OUT_OF_ORDER_SEQUENCE_NUMBER'));
    await expect(failed).rejects.toThrow('OUT_OF_ORDER_SEQUENCE_NUMBER');
    await tick();
    expect(fake.closed).toEqual([1]);
    expect(fake.sends.map((send) => [send.producer, send.keys])).toEqual([
      [1, ['a']],
      [2, ['b']],
    ]);
    fake.sends[1]!.settle();
    await next;
    // The retried records go out on the new producer too; it is kept while sends succeed.
    const retried = producer.send([record('a')]);
    await tick();
    fake.sends[2]!.settle();
    await retried;
    expect(fake.sends[2]!.producer).toBe(2);
    await producer.close();
    expect(fake.closed).toEqual([1, 2]);
    await expect(producer.send([record('c')])).rejects.toThrow('closed');
  });
});
