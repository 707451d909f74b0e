/**
 * kafkaRelayPublisher's own rules, with a fake producer (pure logic): a publish resolves only
 * after its send resolved, a failed send rejects every publish in it, publishes of different
 * aggregates share a send, and two records of one aggregate are never unacknowledged together.
 */
import { describe, expect, it } from 'vitest';
import {
  kafkaRelayPublisher,
  UnknownEventError,
  type Envelope,
  type KafkaProducer,
  type OutboundMessage,
} from 'evgen/runtime';
import { type KafkaOutboundRecord } from '../../src/runtime/kafka/kafka-client.js';

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
});
