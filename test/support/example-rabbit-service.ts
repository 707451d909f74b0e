/**
 * The example catalog's generated pieces a RabbitMQ service test loads from a fresh
 * `generateExample` build: the topology and publisher routes, the OrderCancelled v1 outbox writer
 * and the inventory-service consumer factory (typed loosely: the build is loaded at run time).
 */
import type {
  Envelope,
  InboxConsumer,
  RabbitRoutes,
  RabbitTopology,
  Transaction,
} from '../../src/runtime/index.js';
import type { GeneratedExample } from './generated-example.js';

export interface ExampleRabbitService {
  rabbitTopology: RabbitTopology;
  rabbitRoutes: RabbitRoutes;
  writeOrderCancelledV1(
    tx: Transaction,
    payload: unknown,
    context?: object,
    options?: object,
  ): Promise<Envelope>;
  createInventoryServiceConsumer(options: object): InboxConsumer;
}

export async function loadExampleRabbitService(
  example: GeneratedExample,
): Promise<ExampleRabbitService> {
  type Part<K extends keyof ExampleRabbitService> = Pick<ExampleRabbitService, K>;
  return {
    ...(await example.load<Part<'rabbitTopology'>>('rabbitmq/topology.ts')),
    ...(await example.load<Part<'rabbitRoutes'>>('rabbitmq/publishers.ts')),
    ...(await example.load<Part<'writeOrderCancelledV1'>>('order/order-cancelled/outbox.ts')),
    ...(await example.load<Part<'createInventoryServiceConsumer'>>(
      'consumers/inventory-service.ts',
    )),
  };
}
