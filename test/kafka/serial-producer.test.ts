/**
 * The send discipline of both adapters' producers, with a fake client producer: one send in
 * flight at a time, and after a failed send (a timeout, a fatal sequence error) the next send
 * runs on a new client producer while the failed one is closed. Each send is bounded by
 * `timeoutMs` with the connect of that new producer included: a connect to a broker that does not
 * answer (SIGSTOPped) is bounded by nothing shorter than the library's 30 s request timeout.
 */
import { describe, expect, it } from 'vitest';
import type { KafkaOutboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { KafkaTimeoutError } from '../../src/runtime/kafka/send-timeout.js';
import { serialProducer } from '../../src/runtime/kafka/serial-producer.js';

interface FakeSend {
  readonly producer: number;
  readonly keys: string[];
  settle(error?: Error): void;
}

/** A connect the test settles by hand (the broker paused, then continued). */
interface FakeConnect {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * A fake client producer: producers are numbered 1, 2, … in connect order. With `held`, every
 * connect after the first waits until the test settles it through `connects`.
 */
function fakeLifecycle(options: { held?: boolean } = {}) {
  let connected = 0;
  const closed: number[] = [];
  const sends: FakeSend[] = [];
  const connects: FakeConnect[] = [];
  return {
    closed,
    sends,
    connects,
    connected: () => connected,
    lifecycle: {
      connect: () =>
        connected === 0 || !options.held
          ? Promise.resolve(++connected)
          : new Promise<number>((resolve, reject) =>
              connects.push({ resolve: () => resolve(++connected), reject }),
            ),
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

/** A producer on a held fake whose first send has failed: whatever comes next must connect anew. */
async function afterFailedSend() {
  const fake = fakeLifecycle({ held: true });
  const producer = await serialProducer(fake.lifecycle, 50);
  const failed = producer.send([record('a')]);
  await tick();
  fake.sends[0]!.settle(new Error('Request timed out'));
  await expect(failed).rejects.toThrow('Request timed out');
  return { fake, producer };
}

describe('serialProducer', () => {
  it('starts a send only after the previous one settled', async () => {
    const fake = fakeLifecycle();
    const producer = await serialProducer(fake.lifecycle, 60_000);
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
    const producer = await serialProducer(fake.lifecycle, 60_000);
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
  it('a send whose new producer cannot connect rejects within timeoutMs; the connect goes on for the next send', async () => {
    const fake = fakeLifecycle({ held: true });
    const producer = await serialProducer(fake.lifecycle, 50);
    const failed = producer.send([record('a')]);
    const waiting = producer.send([record('b')]);
    const queued = producer.send([record('c')]);
    await tick();
    fake.sends[0]!.settle(new Error('Request timed out'));
    await expect(failed).rejects.toThrow('Request timed out');
    // The broker does not answer the new producer's connect: the sends waiting for it give up
    // at their own bound instead of waiting as long as the library keeps connecting.
    await expect(waiting).rejects.toBeInstanceOf(KafkaTimeoutError);
    await expect(queued).rejects.toBeInstanceOf(KafkaTimeoutError);
    // One connect in flight, shared: the second send did not start another.
    expect(fake.connects).toHaveLength(1);
    // The broker answers: the connect completes; the records of the sends that gave up were not
    // sent behind their callers' backs, and the next send uses that producer.
    fake.connects[0]!.resolve();
    await tick();
    expect(fake.sends.map((send) => [send.producer, send.keys])).toEqual([[1, ['a']]]);
    const next = producer.send([record('b'), record('c')]);
    await tick();
    expect(fake.sends.map((send) => [send.producer, send.keys])).toEqual([
      [1, ['a']],
      [2, ['b', 'c']],
    ]);
    fake.sends[1]!.settle();
    await next;
    expect(fake.connected()).toBe(2);
    await producer.close();
    expect(fake.closed).toEqual([1, 2]);
  });

  it('a send that the broker never answers rejects within timeoutMs and its producer is replaced', async () => {
    const fake = fakeLifecycle();
    const producer = await serialProducer(fake.lifecycle, 50);
    // The fake send never settles unless told to: only the bound ends it.
    await expect(producer.send([record('a')])).rejects.toBeInstanceOf(KafkaTimeoutError);
    const next = producer.send([record('b')]);
    await tick();
    expect(fake.closed).toEqual([1]);
    expect(fake.sends.map((send) => send.producer)).toEqual([1, 2]);
    fake.sends[1]!.settle();
    await next;
    await producer.close();
  });

  it('a probe is bounded by timeoutMs too and does not hold the sends queued behind it', async () => {
    const { fake, producer } = await afterFailedSend();
    const probe = producer.probe();
    const queued = producer.send([record('b')]);
    await expect(probe).rejects.toBeInstanceOf(KafkaTimeoutError);
    await expect(queued).rejects.toBeInstanceOf(KafkaTimeoutError);
    // The broker is back: the connect the probe started completes and the next probe sees it.
    fake.connects[0]!.resolve();
    await producer.probe();
    expect(fake.connects).toHaveLength(1);
    expect(fake.connected()).toBe(2);
    await producer.close();
  });

  it('a connect that completes after close() is closed, not kept', async () => {
    const { fake, producer } = await afterFailedSend();
    await expect(producer.probe()).rejects.toBeInstanceOf(KafkaTimeoutError);
    await producer.close();
    expect(fake.closed).toEqual([1]);
    fake.connects[0]!.resolve();
    await tick();
    expect(fake.closed).toEqual([1, 2]);
    await expect(producer.send([record('b')])).rejects.toThrow('closed');
  });
});
