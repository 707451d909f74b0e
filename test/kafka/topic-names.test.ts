import { describe, expect, it } from 'vitest';
import { DEFAULT_KAFKA_RETRY_TIERS_MS, kafkaDeadLetterTopic, kafkaRetryTopic } from 'evgen/runtime';
import {
  checkTopicName,
  kafkaConsumerTopics,
  kafkaTierLabel,
} from '../../src/runtime/kafka/topic-names.js';

describe('Kafka consumer topic names', () => {
  it('name retry tiers and the dead-letter topic per consumer', () => {
    expect(kafkaRetryTopic('inventory-service', 1_000)).toBe('inventory-service.retry.1s');
    expect(kafkaRetryTopic('inventory-service', 250, 'p.')).toBe('p.inventory-service.retry.250ms');
    expect(kafkaDeadLetterTopic('inventory-service')).toBe('inventory-service.dlt');
    expect(kafkaConsumerTopics('shipping-service')).toEqual({
      retry: DEFAULT_KAFKA_RETRY_TIERS_MS.map((delayMs) => ({
        delayMs,
        topic: `shipping-service.retry.${kafkaTierLabel(delayMs)}`,
      })),
      deadLetter: 'shipping-service.dlt',
    });
    expect(DEFAULT_KAFKA_RETRY_TIERS_MS).toEqual([1_000, 10_000, 60_000]);
  });

  it('refuse tiers that are not ascending positive integers and names Kafka rejects', () => {
    expect(() => kafkaConsumerTopics('c', [10, 10])).toThrow(/ascending/);
    expect(() => kafkaConsumerTopics('c', [0])).toThrow(/positive integer/);
    expect(() => kafkaTierLabel(1.5)).toThrow(/positive integer/);
    expect(() => checkTopicName('a b')).toThrow(/not a valid Kafka topic name/);
    expect(() => checkTopicName('x'.repeat(250))).toThrow(/at most 249/);
    expect(() => checkTopicName('..')).toThrow();
    expect(checkTopicName('order.events')).toBe('order.events');
  });
});
