/**
 * The operator commands' dead-letter sources, connected from their options: the runtime's
 * sources (delivery/dead-letter-source.ts) over a connection made from `--amqp-url` or
 * `--kafka-brokers` and the catalog's topology prefix. The client libraries load only when used.
 */
import type { ChannelModel } from 'amqplib';
import type { DeadLetterSource } from '../runtime/delivery/dead-letter-source.js';
import { resolveTopology } from '../runtime/rabbitmq/topology.js';

/** RabbitMQ dead queues (`<prefix><consumer>.dead`), read and replayed by the runtime's functions. */
export async function rabbitDeadLetterSource(
  url: string,
  prefix: string,
): Promise<DeadLetterSource> {
  const amqp = await import('amqplib');
  const { rabbitMqDeadLetterSource } =
    await import('../runtime/rabbitmq/rabbitmq-dead-letter-source.js');
  const connection: ChannelModel = await amqp.connect(url);
  connection.on('error', () => undefined);
  // Only queue names matter here: subscriptions and tiers do not change the dead queue's name.
  const routes = (consumer: string) =>
    resolveTopology(
      { exchanges: [], consumers: [{ name: consumer, subscriptions: [] }] },
      { prefix },
    ).consumers[consumer]!;
  const source = rabbitMqDeadLetterSource({ connection, routes });
  return {
    ...source,
    async close() {
      await source.close();
      await connection.close().catch(() => undefined);
    },
  };
}

/**
 * Kafka dead-letter topics (`<prefix><consumer>.dlt`), read in a throwaway consumer group and
 * replayed into the consumer's first retry topic by the runtime's functions. `tiers` must be the
 * retry tiers the services run with (the first tier's topic receives replays).
 */
export async function kafkaDeadLetterSource(
  brokers: readonly string[],
  prefix: string,
  tiers: readonly number[] | undefined,
): Promise<DeadLetterSource> {
  const [{ kafkajsClient }, { kafkaDeadLetterSource: source }, { kafkaConsumerTopics }] =
    await Promise.all([
      import('../runtime/kafka/kafkajs-client.js'),
      import('../runtime/kafka/consumer/kafka-dead-letter-source.js'),
      import('../runtime/kafka/topic-names.js'),
    ]);
  return source({
    client: kafkajsClient({ brokers, clientId: 'evgen-cli' }),
    routes: (consumer) => ({
      groupId: `${prefix}${consumer}`,
      ...kafkaConsumerTopics(consumer, tiers, prefix),
    }),
  });
}
