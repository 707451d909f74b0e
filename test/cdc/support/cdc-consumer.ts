/**
 * The consuming side of the CDC tests: the example catalog's inventory-service consumer on its
 * own prefixed topics (inventoryOnKafka) run by evgen's Kafka consumer runner; `stop()` stops the
 * runner and removes the topics, group and schema (call it from afterEach).
 */
import {
  createKafkaConsumerRunner,
  type KafkaClient,
  type KafkaConnection,
  type KafkaConsumerRunnerEvent,
} from 'evgen/runtime';
import {
  inventoryOnKafka,
  type InventoryOnKafka,
} from '../../kafka-consumer/support/inventory-on-kafka.js';

export interface CdcConsumer {
  /** Sets up topics, inbox and effects and starts the runner; resolves to the set-up. */
  start(
    create: (connection: KafkaConnection) => KafkaClient,
    onEvent?: (event: KafkaConsumerRunnerEvent) => void,
  ): Promise<InventoryOnKafka>;
  stop(): Promise<void>;
}

export function cdcConsumer(): CdcConsumer {
  let setup: InventoryOnKafka | undefined;
  let stopRunner: (() => Promise<void>) | undefined;
  return {
    async start(create, onEvent) {
      const s = (setup = await inventoryOnKafka(create, { partitions: 3 }));
      const runner = createKafkaConsumerRunner({
        handler: s.handler(),
        ...(onEvent !== undefined ? { onEvent } : {}),
        kafka: {
          client: s.client,
          routes: s.routes,
        },
      });
      stopRunner = () => runner.stop();
      await runner.start();
      return s;
    },
    async stop() {
      await stopRunner?.();
      stopRunner = undefined;
      await setup?.cleanup().catch(() => undefined);
      setup = undefined;
    },
  };
}
