/**
 * The operator commands' dead-letter sources, connected from their options: the runtime's
 * sources (delivery/dead-letter-source.ts) over a connection made from `--amqp-url`,
 * `--kafka-brokers` or `--pulsar-url` and the catalog's topology prefix. The client libraries
 * load only when used.
 */
import type { ChannelModel } from 'amqplib';
import { DEFAULT_PULSAR_NAMESPACE, DEFAULT_PULSAR_TENANT, type Catalog } from '../catalog/model.js';
import { pulsarEvents } from '../catalog/event-transports.js';
import type { DeadLetterSource } from '../runtime/delivery/dead-letter-source.js';
import { resolveTopology } from '../runtime/rabbitmq/topology.js';
import type { PulsarTopology } from '../runtime/pulsar/pulsar-topology.js';

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

/**
 * Pulsar dead-letter topics (`<prefix><consumer>.dlt` beside the consumer's first event topic),
 * read on their `<consumer>.dlq` subscription over the broker's WebSocket and admin APIs at
 * `webServiceUrl`. Each consumer's routes come from the catalog exactly as the generated
 * `pulsarTopology` gives them to the runner, so a replay goes to that consumer's own first retry
 * topic (named by `tiers`, the tiers the services run with) and nowhere a letter's properties say.
 */
export async function pulsarCliDeadLetterSource(
  webServiceUrl: string,
  prefix: string,
  tiers: readonly number[] | undefined,
  catalog: Pick<Catalog, 'events' | 'consumers'>,
): Promise<DeadLetterSource> {
  const [{ pulsarWebSocketClient }, { pulsarDeadLetterSource }, { pulsarConsumerRoutes }] =
    await Promise.all([
      import('../runtime/pulsar/websocket-client.js'),
      import('../runtime/pulsar/consumer/pulsar-dead-letter-source.js'),
      import('../runtime/pulsar/consumer/pulsar-consumer-routes.js'),
    ]);
  const topology = pulsarTopologyOf(catalog);
  return pulsarDeadLetterSource({
    client: pulsarWebSocketClient({ webServiceUrl }),
    webServiceUrl,
    routes: (consumer) =>
      pulsarConsumerRoutes(topology, consumer, {
        prefix,
        ...(tiers !== undefined ? { retryTiersMs: tiers } : {}),
      }),
  });
}

/** The consumers' Pulsar subscriptions of a catalog, as the generated `pulsarTopology` lists them. */
function pulsarTopologyOf(catalog: Pick<Catalog, 'events' | 'consumers'>): PulsarTopology {
  const onPulsar = pulsarEvents(catalog.events);
  return {
    topics: [],
    consumers: catalog.consumers.map((consumer) => ({
      name: consumer.name,
      subscriptions: onPulsar
        .filter((event) => consumer.subscribes.includes(event.eventType))
        .map((event) => ({
          eventType: event.eventType,
          tenant: event.pulsar.tenant ?? DEFAULT_PULSAR_TENANT,
          namespace: event.pulsar.namespace ?? DEFAULT_PULSAR_NAMESPACE,
          topic: event.pulsar.topic,
        })),
    })),
  };
}
