/**
 * kafkaRelayPublisher's own rules, with a fake producer (pure logic): a publish resolves only
 * after its send resolved, a failed send rejects every publish in it, publishes of different
 * aggregates share a send, and two records of one aggregate are never in two sends at once. A
 * chain (`publishChain`, one aggregate's rows) goes in one send in order, and what is sent of it
 * is always a prefix: after a record that fails, the rest are rejected unsent.
 */
import { describe, expect, it } from 'vitest';
import {
  KafkaChainHeldBackError,
  kafkaRelayPublisher,
  UnknownEventError,
  UnpublishableMessageError,
  type Envelope,
  type KafkaProducer,
  type OutboundMessage,
} from 'evgen/runtime';
import { type KafkaOutboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import type { SchemaIds } from '../../src/runtime/registry/schema-ids.js';

class FakeProducer implements KafkaProducer {
  readonly sends: { records: KafkaOutboundRecord[]; settle(error?: Error): void }[] = [];
  send(records: readonly KafkaOutboundRecord[]): Promise<void> {
    return new Promise((resolve, reject) =>
      this.sends.push({
        records: [...records],
        settle: (error) => (error ? reject(error) : resolve()),
      }),
    );
  }
  partitionFor(): number {
    return 0;
  }
  async close(): Promise<void> {}
}

let sequence = 0;
function message(aggregateId: string, eventType = 'test.OrderPlaced'): OutboundMessage {
  sequence += 1;
  const envelope: Envelope = {
    messageId: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    eventType,
    schemaVersion: 1,
    aggregateType: 'Order',
    aggregateId,
    occurredAt: '2026-01-01T00:00:00.000Z',
    payload: { orderId: aggregateId },
  };
  return { outboxId: String(sequence), envelope, headers: { traceparent: 't' }, attempts: 0 };
}

const routes = { 'test.OrderPlaced': { topic: 'orders' } };
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('kafkaRelayPublisher', () => {
  it('batches aggregates into one send and resolves each publish only after the acknowledgement', async () => {
    const producer = new FakeProducer();
    const publisher = kafkaRelayPublisher(producer, routes, { prefix: 'p.' });
    let settled = 0;
    const publishes = ['a', 'b', 'c'].map((id) =>
      publisher.publish(message(id)).then(() => void (settled += 1)),
    );
    await tick();
    expect(producer.sends).toHaveLength(1);
    expect(producer.sends[0]!.records.map((r) => [r.topic, r.key])).toEqual([
      ['p.orders', 'a'],
      ['p.orders', 'b'],
      ['p.orders', 'c'],
    ]);
    expect(producer.sends[0]!.records[0]!.headers).toMatchObject({
      traceparent: 't',
      messageId: expect.any(String),
    });
    await tick();
    expect(settled).toBe(0);
    producer.sends[0]!.settle();
    await Promise.all(publishes);
    expect(settled).toBe(3);
  });

  it('never has two unacknowledged records of one aggregate; a failed send rejects all of its publishes', async () => {
    const producer = new FakeProducer();
    const publisher = kafkaRelayPublisher(producer, routes, { maxInFlightSends: 1 });
    const a1 = publisher.publish(message('a'));
    await tick();
    const a2 = publisher.publish(message('a'));
    const b1 = publisher.publish(message('b'));
    await tick();
    // a2 and b1 wait: one send in flight, and a1 of the same key is unacknowledged.
    expect(producer.sends).toHaveLength(1);
    producer.sends[0]!.settle(new Error('broker down'));
    await expect(a1).rejects.toThrow('broker down');
    await tick();
    expect(producer.sends).toHaveLength(2);
    expect(producer.sends[1]!.records.map((r) => r.key)).toEqual(['a', 'b']);
    producer.sends[1]!.settle();
    await expect(Promise.all([a2, b1])).resolves.toEqual([undefined, undefined]);

    const a3 = publisher.publish(message('a'));
    const a4 = publisher.publish(message('a'));
    await tick();
    expect(producer.sends[2]!.records).toHaveLength(1);
    producer.sends[2]!.settle();
    await a3;
    await tick();
    expect(producer.sends[3]!.records).toHaveLength(1);
    producer.sends[3]!.settle();
    await a4;
  });

  it('runs several sends at once, but never two with records of one aggregate', async () => {
    const producer = new FakeProducer();
    const publisher = kafkaRelayPublisher(producer, routes, { maxInFlightSends: 2 });
    const a1 = publisher.publish(message('a'));
    await tick();
    const b1 = publisher.publish(message('b'));
    const a2 = publisher.publish(message('a'));
    await tick();
    expect(producer.sends.map((s) => s.records.map((r) => r.key))).toEqual([['a'], ['b']]);
    producer.sends[1]!.settle();
    await b1;
    await tick();
    // a2 still waits for a1, although a send slot is free.
    expect(producer.sends).toHaveLength(2);
    producer.sends[0]!.settle();
    await a1;
    await tick();
    expect(producer.sends[2]!.records.map((r) => r.key)).toEqual(['a']);
    producer.sends[2]!.settle();
    await a2;
  });

  it('refuses an event type without a topic as a non-retryable error; checks its options', async () => {
    const publisher = kafkaRelayPublisher(new FakeProducer(), routes);
    await expect(publisher.publish(message('a', 'test.Unknown'))).rejects.toBeInstanceOf(
      UnknownEventError,
    );
    expect(() => kafkaRelayPublisher(new FakeProducer(), routes, { maxBatchSize: 0 })).toThrow(
      RangeError,
    );
  });

  describe('publishChain', () => {
    const keysOf = (send: { records: KafkaOutboundRecord[] }) =>
      send.records.map((r) => `${String(r.key)}:${String(r.headers?.messageId).slice(-2)}`);

    it("puts a chain's records in one send, in order, beside other keys; each is stored once acknowledged", async () => {
      const producer = new FakeProducer();
      const publisher = kafkaRelayPublisher(producer, routes);
      sequence = 0;
      const chainA = publisher.publishChain!([message('a'), message('a'), message('a')]);
      const chainB = publisher.publishChain!([message('b'), message('b')]);
      await tick();
      expect(producer.sends.map(keysOf)).toEqual([['a:01', 'a:02', 'a:03', 'b:04', 'b:05']]);
      producer.sends[0]!.settle();
      expect(await chainA).toEqual([{ stored: true }, { stored: true }, { stored: true }]);
      expect(await chainB).toEqual([{ stored: true }, { stored: true }]);
    });

    it('a lone publish of a key does not join a chain of it; the chain waits while it is in flight', async () => {
      const producer = new FakeProducer();
      const publisher = kafkaRelayPublisher(producer, routes, { maxInFlightSends: 2 });
      sequence = 0;
      const lone = publisher.publish(message('a'));
      await tick();
      const chain = publisher.publishChain!([message('a'), message('a')]);
      await tick();
      expect(producer.sends.map(keysOf)).toEqual([['a:01']]);
      producer.sends[0]!.settle();
      await lone;
      await tick();
      expect(producer.sends.map(keysOf)[1]).toEqual(['a:02', 'a:03']);
      producer.sends[1]!.settle();
      expect(await chain).toEqual([{ stored: true }, { stored: true }]);
    });

    it('a chain longer than maxBatchSize continues after the acknowledgement; a failed send rejects the rest unsent', async () => {
      const producer = new FakeProducer();
      const publisher = kafkaRelayPublisher(producer, routes, { maxBatchSize: 2 });
      sequence = 0;
      const stored = publisher.publishChain!([message('a'), message('a'), message('a')]);
      await tick();
      expect(producer.sends.map(keysOf)).toEqual([['a:01', 'a:02']]);
      producer.sends[0]!.settle();
      await tick();
      expect(producer.sends.map(keysOf)[1]).toEqual(['a:03']);
      producer.sends[1]!.settle();
      expect((await stored).map((r) => r.stored)).toEqual([true, true, true]);

      const failed = publisher.publishChain!([message('b'), message('b'), message('b')]);
      const other = publisher.publish(message('c'));
      await tick();
      expect(producer.sends.map(keysOf)[2]).toEqual(['b:04', 'b:05']);
      producer.sends[2]!.settle(new Error('broker down'));
      const results = await failed;
      expect(results[0]).toEqual({ stored: false, error: new Error('broker down') });
      expect(results[1]).toEqual({ stored: false, error: new Error('broker down') });
      expect(results[2]).toMatchObject({
        stored: false,
        error: expect.any(KafkaChainHeldBackError),
      });
      await tick();
      // b:06 was never sent; c goes on.
      expect(producer.sends.map(keysOf).slice(3)).toEqual([['c:07']]);
      producer.sends[3]!.settle();
      await other;
    });

    it('a record the broker refuses: the chain goes again record by record, the ones before it stored, the ones after it unsent', async () => {
      const producer = new FakeProducer();
      const publisher = kafkaRelayPublisher(producer, routes);
      sequence = 0;
      const results = publisher.publishChain!([message('a'), message('a'), message('a')]);
      await tick();
      const tooLarge = Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });
      producer.sends[0]!.settle(tooLarge);
      await tick();
      expect(producer.sends.map(keysOf)[1]).toEqual(['a:01']);
      producer.sends[1]!.settle();
      await tick();
      expect(producer.sends.map(keysOf)[2]).toEqual(['a:02']);
      producer.sends[2]!.settle(tooLarge);
      const [first, second, third] = await results;
      expect(first).toEqual({ stored: true });
      expect(second).toMatchObject({
        stored: false,
        error: expect.any(UnpublishableMessageError),
      });
      expect(third).toMatchObject({ stored: false, error: expect.any(KafkaChainHeldBackError) });
      await tick();
      expect(producer.sends).toHaveLength(3);
    });

    it('a message that cannot be sent stops the chain there: the ones before it go, none after it', async () => {
      const producer = new FakeProducer();
      const publisher = kafkaRelayPublisher(producer, routes);
      sequence = 0;
      const results = publisher.publishChain!([
        message('a'),
        message('a', 'test.Unknown'),
        message('a'),
      ]);
      await tick();
      expect(producer.sends.map(keysOf)).toEqual([['a:01']]);
      producer.sends[0]!.settle();
      const [first, second, third] = await results;
      expect(first).toEqual({ stored: true });
      expect(second).toMatchObject({ stored: false, error: expect.any(UnknownEventError) });
      expect(third).toMatchObject({ stored: false, error: expect.any(KafkaChainHeldBackError) });
      expect(producer.sends).toHaveLength(1);
    });

    it('framed records: a send that fails while a later record of the chain waits for its schema id rejects that record unsent', async () => {
      const producer = new FakeProducer();
      const ids: { resolve(id: number): void }[] = [];
      const schemaIds = {
        idFor: () => new Promise<number>((resolve) => ids.push({ resolve })),
        cachedId: () => undefined,
      } as unknown as SchemaIds;
      const publisher = kafkaRelayPublisher(
        producer,
        { 'test.OrderPlaced': { topic: 'orders', wireFormat: 'confluent' } },
        { wireFormat: { schemaIds } },
      );
      sequence = 0;
      const results = publisher.publishChain!([message('a'), message('a')]);
      await tick();
      ids[0]!.resolve(7);
      await tick();
      expect(producer.sends).toHaveLength(1);
      producer.sends[0]!.settle(new Error('broker down'));
      await tick();
      ids[1]!.resolve(7);
      const [first, second] = await results;
      expect(first).toEqual({ stored: false, error: new Error('broker down') });
      expect(second).toMatchObject({ stored: false, error: expect.any(KafkaChainHeldBackError) });
      await tick();
      expect(producer.sends).toHaveLength(1);
    });
  });
});
