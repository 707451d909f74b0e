/**
 * TopicPresence as pure logic (a fake lookup and clock): what it remembers, when it asks again,
 * and that a failed lookup is not taken for an answer. The real brokers' side is
 * missing-topic.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  KafkaTopicMissingError,
  MISSING_TOPIC_RECHECK_MS,
  TopicPresence,
} from '../../src/runtime/kafka/topic-presence.js';

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

describe('TopicPresence', () => {
  it('asks once for a topic that exists, then answers at once', async () => {
    const fake = fakeLookup(new Set(['orders']));
    const presence = new TopicPresence(fake.lookup);
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
    const presence = new TopicPresence(fake.lookup, () => now);
    await expect(presence.require('audit')).rejects.toThrow(KafkaTopicMissingError);
    now += MISSING_TOPIC_RECHECK_MS - 1;
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
    const presence = new TopicPresence(fake.lookup);
    fake.failWith(new Error('broker down'));
    await expect(presence.require('orders')).rejects.toThrow('broker down');
    await presence.require('orders');
    expect(fake.asked).toEqual(['orders', 'orders']);
  });
});
