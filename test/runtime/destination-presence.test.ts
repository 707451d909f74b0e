/**
 * DestinationPresence as pure logic (a fake lookup and clock): what it remembers, when it asks
 * again, and that a failed lookup is not taken for an answer. The real brokers' side is
 * test/kafka/missing-topic.test.ts and test/rabbitmq/missing-exchange.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  DestinationPresence,
  MISSING_DESTINATION_RECHECK_MS,
} from '../../src/runtime/destination-presence.js';
import { KafkaTopicMissingError } from '../../src/runtime/kafka/topic-lookup.js';

const topicPresence = (lookup: (topic: string) => Promise<boolean>, now?: () => number) =>
  new DestinationPresence(lookup, (topic) => new KafkaTopicMissingError(topic), now);

function fakeLookup(topics: Set<string>) {
  const asked: string[] = [];
  let failNext: Error | undefined;
  return {
    asked,
    failWith(error: Error) {
      failNext = error;
    },
    lookup: async (topic: string) => {
      asked.push(topic);
      if (failNext !== undefined) {
        const error = failNext;
        failNext = undefined;
        throw error;
      }
      return topics.has(topic);
    },
  };
}

describe('DestinationPresence', () => {
  it('asks once for a topic that exists, then answers at once', async () => {
    const fake = fakeLookup(new Set(['orders']));
    const presence = topicPresence(fake.lookup);
    const first = presence.require('orders');
    const second = presence.require('orders');
    expect(first).toBeInstanceOf(Promise);
    await Promise.all([first, second]);
    expect(presence.require('orders')).toBe(true);
    expect(fake.asked).toEqual(['orders']);
  });

  it('refuses a missing topic, without asking again until the recheck interval passed', async () => {
    const topics = new Set<string>();
    const fake = fakeLookup(topics);
    let now = 0;
    const presence = topicPresence(fake.lookup, () => now);
    await expect(presence.require('audit')).rejects.toThrow(KafkaTopicMissingError);
    now += MISSING_DESTINATION_RECHECK_MS - 1;
    await expect(presence.require('audit')).rejects.toMatchObject({
      name: 'KafkaTopicMissingError',
      topic: 'audit',
      retryable: true,
    });
    expect(fake.asked).toEqual(['audit']);
    topics.add('audit');
    now += 1;
    await presence.require('audit');
    expect(presence.require('audit')).toBe(true);
    expect(fake.asked).toEqual(['audit', 'audit']);
  });

  it('passes a failed lookup on and asks again next time', async () => {
    const fake = fakeLookup(new Set(['orders']));
    const presence = topicPresence(fake.lookup);
    fake.failWith(new Error('broker down'));
    await expect(presence.require('orders')).rejects.toThrow('broker down');
    await presence.require('orders');
    expect(fake.asked).toEqual(['orders', 'orders']);
  });
});
