/**
 * Transport-interface pieces the consumer side relies on, on every adapter against the real
 * broker: `KafkaAdmin.topicOffsets` (low/high watermarks, for lag and for reading a dead-letter
 * topic to its end) and concurrent sends on one producer (the runner sends retry copies and dead
 * letters from several partitions at once).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { inventoryOnKafka, type InventoryOnKafka } from './support/inventory-on-kafka.js';

describe.each(KAFKA_CLIENTS)(
  'transport pieces of the consumer ($name, real broker)',
  ({ create }) => {
    let setup: InventoryOnKafka | undefined;
    afterEach(async () => {
      await setup?.cleanup();
      setup = undefined;
    });

    it('topicOffsets reports start and end offsets of every partition, sorted by partition', async () => {
      setup = await inventoryOnKafka(create, { partitions: 3 });
      const topic = setup.routes.topics[0]!;
      expect(await setup.kafka.admin.topicOffsets(topic)).toEqual([
        { partition: 0, start: '0', end: '0' },
        { partition: 1, start: '0', end: '0' },
        { partition: 2, start: '0', end: '0' },
      ]);
      const orderId = randomUUID();
      for (let i = 0; i < 4; i++) await setup.publish(orderId);
      const partition = setup.producer.partitionFor(orderId, 3);
      const offsets = await setup.kafka.admin.topicOffsets(topic);
      expect(offsets.map((p) => p.end)).toEqual(
        [0, 1, 2].map((p) => (p === partition ? '4' : '0')),
      );
      await expect(setup.kafka.admin.topicOffsets(`${topic}-missing`)).rejects.toThrow();
    });

    it('every record of concurrent sends on one producer is stored once acknowledged, with byte headers intact', async () => {
      setup = await inventoryOnKafka(create, { partitions: 3 });
      const topic = setup.routes.deadLetter; // one partition: every send competes for it
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          setup!.producer.send([
            {
              topic,
              key: `k${i}`,
              value: `v${i}`,
              headers: { text: `t${i}`, bytes: Buffer.from([0, 0, 0, 0xc8]) },
            },
          ]),
        ),
      );
      expect(await setup.kafka.admin.topicOffsets(topic)).toEqual([
        { partition: 0, start: '0', end: '10' },
      ]);
    });
  },
);
