/**
 * The transports the delivery conformance suite runs over, behind one small interface: start a
 * runner with a handler, send raw messages the way that transport carries them (body, messageId
 * and eventType beside it, aggregate headers), read its metrics and its dead letters back from
 * where it keeps them. RabbitMQ and Kafka use the real brokers (fresh prefixed queues and
 * topics per test), and so does Pulsar (its own topics and subscriptions per test, deleted after);
 * the in-process broker needs nothing.
 */
import { randomUUID } from 'node:crypto';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  createKafkaConsumerRunner,
  InProcessBroker,
  inProcessDeadLetterSource,
  kafkaDeadLetterSource,
  createPulsarConsumerRunner,
  pulsarConsumerTopics,
  pulsarDeadLetterSource,
  pulsarWebSocketClient,
  type PulsarClient,
  type PulsarConsumerRoutes,
  type PulsarConsumerRunner,
  type PulsarProducer,
  rabbitMqDeadLetterSource,
  type ConsumerRunner,
  type DeadLetterRecord,
  type DeadLetterSource,
  type DeliveryCounts,
  type KafkaClient,
  type KafkaConnection,
  type KafkaConsumerRoutes,
  type KafkaConsumerRunner,
  type KafkaProducer,
  type MessageHandler,
  type ResolvedTopology,
} from 'evgen/runtime';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../../support/kafka/test-kafka.js';
import { createTopicsSettled } from '../../kafka-consumer/support/inventory-on-kafka.js';
import {
  createTestBroker,
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  type TestBroker,
} from '../../support/rabbitmq.js';
import { rawAmqpPublish } from '../../support/raw-amqp-publish.js';
import { createTestPulsar, type TestPulsar } from '../../support/pulsar/test-pulsar.js';

/** The consumer every transport runs; its subscriptions match SAMPLE_TOPOLOGY's. */
export const CONSUMER = 'inventory-service';
/** Delay of the (only) retry tier, ms. */
export const RETRY_DELAY_MS = 200;

export interface RawMessage {
  readonly body: string;
  /**
   * The transport's messageId beside the body (AMQP property, Kafka header); `null` sends none,
   * as a foreign producer may (the RabbitMQ transport otherwise invents a UUID).
   */
  readonly messageId?: string | null;
  /** Producer headers beside the body (AMQP headers, Kafka record headers). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The transport's eventType beside the body (AMQP `type`, Kafka header); absent = foreign producer. */
  readonly eventType?: string;
  /** Aggregate id: Kafka key, RabbitMQ lane. */
  readonly key: string;
}

/** A dead letter as any transport keeps it. */
export interface Letter {
  readonly messageId: string | undefined;
  readonly errorType: string | undefined;
  readonly errorMessage: string | undefined;
  readonly attempts: number | undefined;
  readonly consumer: string | undefined;
}

export interface TransportUnderTest {
  readonly name: string;
  /**
   * Whether a message of a type the consumer does not subscribe to reaches it when its eventType
   * is given beside the body (Kafka topics carry every type; RabbitMQ bindings and the in-process
   * broker route by type, so only a body naming another type reaches the consumer there).
   */
  readonly deliversEveryType: boolean;
  /**
   * Size of one producer header that still leaves the message within what this transport carries
   * (RabbitMQ: its 128 KiB frame_max; Kafka: 1 MiB `message.max.bytes`, minus what the test
   * message needs beside it), so a copy of it with evgen's diagnostics added cannot fit as it is.
   */
  readonly largestHeaderBytes: number;
  start(handler: MessageHandler, maxAttempts: number): Promise<void>;
  send(message: RawMessage): Promise<void>;
  metrics(): DeliveryCounts;
  /**
   * Times the runner had to start over because of a delivery: channel restarts and retry copies
   * or dead letters that could not be sent (the delivery then comes back).
   */
  restarts(): number;
  deadLetters(): Promise<Letter[]>;
  /** Stops the runner (waits for handlers in flight). */
  stop(): Promise<void>;
  cleanup(): Promise<void>;
}

export const TRANSPORTS: readonly { name: string; create(): TransportUnderTest }[] = [
  { name: 'in-process', create: inProcess },
  { name: 'rabbitmq', create: rabbitmq },
  ...KAFKA_CLIENTS.map((client) => ({
    name: `kafka (${client.name})`,
    create: () => kafka(client.name, client.create),
  })),
  { name: 'pulsar', create: pulsar },
];

function inProcess(): TransportUnderTest {
  let broker: InProcessBroker | undefined;
  return {
    name: 'in-process',
    deliversEveryType: false,
    largestHeaderBytes: 1024 * 1024,
    async start(handler, maxAttempts) {
      broker = new InProcessBroker({
        maxAttempts,
        inProcess: {
          retryDelaysMs: [RETRY_DELAY_MS],
        },
      });
      broker.subscribe({
        ...bind(handler),
        subscribes: ['order.OrderCancelled', 'order.OrderCreated'],
      });
    },
    async send(message) {
      broker!.publishRaw({
        messageId: message.messageId ?? '',
        // Routing needs a type: a foreign producer's message is routed as the consumer's own.
        eventType: message.eventType ?? 'order.OrderCancelled',
        body: message.body,
        headers: { ...message.headers },
      });
    },
    metrics: () => broker!.metrics(),
    // Nothing to restart: every outcome is settled in memory.
    restarts: () => 0,
    deadLetters: () => lettersOf(inProcessDeadLetterSource(broker!)),
    async stop() {
      await broker?.settled();
      broker?.close();
    },
    async cleanup() {
      broker?.close();
    },
  };
}

/**
 * The consumer's dead letters, read through the transport's DeadLetterSource (the one the
 * operator commands use); `consumer` is the one the letter's diagnostics name.
 */
async function lettersOf(source: DeadLetterSource): Promise<Letter[]> {
  try {
    const records: DeadLetterRecord[] = await source.list(CONSUMER);
    return records.map((record) => ({
      messageId: record.messageId,
      errorType: record.errorType,
      errorMessage: record.errorMessage,
      attempts: record.attempts,
      consumer: diagnosedConsumer(record),
    }));
  } finally {
    await source.close();
  }
}

/** The consumer a letter's own diagnostics name (RabbitMQ/Kafka headers; in-process: its list). */
function diagnosedConsumer(record: DeadLetterRecord): string | undefined {
  if (record.transport === 'in-process') return record.consumer;
  const header = record.headers['x-evgen-consumer'] ?? record.headers['evgen-consumer'];
  return typeof header === 'string' ? header : undefined;
}

/** A handler object whose methods keep their `this` when spread. */
function bind(handler: MessageHandler): MessageHandler {
  return {
    name: handler.name,
    ...(handler.subscribes !== undefined ? { subscribes: handler.subscribes } : {}),
    handle: (raw, context) => handler.handle(raw, context),
    ...(handler.skip !== undefined
      ? { skip: (skipped, context) => handler.skip!(skipped, context) }
      : {}),
  };
}

function rabbitmq(): TransportUnderTest {
  let broker: TestBroker | undefined;
  let topology: ResolvedTopology | undefined;
  let producer: ConfirmedPublisher | undefined;
  let runner: ConsumerRunner | undefined;
  return {
    name: 'rabbitmq',
    deliversEveryType: true,
    largestHeaderBytes: 128 * 1024 - 1024,
    async start(handler, maxAttempts) {
      broker = await createTestBroker();
      // maxAttempts is the runner's (the shared option), not the topology's: one tier, repeated.
      topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [RETRY_DELAY_MS] });
      producer = new ConfirmedPublisher(broker.connection);
      runner = createRabbitMqConsumerRunner({
        handler,
        maxAttempts,
        rabbitmq: {
          connection: TEST_RABBITMQ_URL,
          routes: topology.consumers[CONSUMER]!,
          prefetch: 10,
        },
      });
      await runner.start();
    },
    async send(message) {
      // Every message on the consumer's bound route: what arrives is decided by the core.
      const exchange = `${broker!.prefix}order`;
      const content = Buffer.from(message.body);
      if (message.messageId !== null && message.headers === undefined) {
        await producer!.publish(exchange, 'order.cancelled', content, {
          persistent: true,
          messageId: message.messageId ?? randomUUID(),
          ...(message.eventType !== undefined ? { type: message.eventType } : {}),
          headers: {},
        });
        return;
      }
      // As a foreign producer publishes: maybe no messageId, headers of any size.
      await rawAmqpPublish({
        url: TEST_RABBITMQ_URL,
        exchange,
        routingKey: 'order.cancelled',
        body: content,
        headers: message.headers ?? {},
        ...(typeof message.messageId === 'string' ? { messageId: message.messageId } : {}),
        ...(message.eventType !== undefined ? { type: message.eventType } : {}),
      });
    },
    metrics: () => runner!.metrics(),
    restarts: () => runner!.metrics().restarts + runner!.metrics().settleFailures,
    deadLetters: () =>
      lettersOf(
        rabbitMqDeadLetterSource({
          connection: broker!.connection,
          routes: (consumer) => topology!.consumers[consumer]!,
        }),
      ),
    async stop() {
      await runner?.stop();
    },
    async cleanup() {
      await runner?.stop();
      await producer?.close();
      await broker?.cleanup();
    },
  };
}

function kafka(
  adapter: string,
  create: (connection: KafkaConnection) => KafkaClient,
): TransportUnderTest {
  let test: TestKafka | undefined;
  let client: KafkaClient | undefined;
  let routes: KafkaConsumerRoutes | undefined;
  let producer: KafkaProducer | undefined;
  let runner: KafkaConsumerRunner | undefined;
  return {
    name: `kafka (${adapter})`,
    deliversEveryType: true,
    // Kafka's default message.max.bytes (1 048 588) minus the test record's ~600 other bytes.
    largestHeaderBytes: 1_048_588 - 1_200,
    async start(handler, maxAttempts) {
      test = await createTestKafka(create);
      client = create({ brokers: [test.brokers] });
      const [topic, deadLetter, retry] = await createTopicsSettled(test, [
        { topic: 'order.events', partitions: 2 },
        { topic: `${CONSUMER}.dlt`, partitions: 1 },
        { topic: `${CONSUMER}.retry`, partitions: 2 },
      ]);
      routes = {
        consumer: CONSUMER,
        groupId: `${test.prefix}${CONSUMER}`,
        topics: [topic!],
        retry: [{ topic: retry!, delayMs: RETRY_DELAY_MS }],
        deadLetter: deadLetter!,
      };
      producer = await client.producer({ timeoutMs: 15_000 });
      // maxAttempts is the runner's (the shared option), not the routes': one tier, repeated.
      runner = createKafkaConsumerRunner({
        handler,
        maxAttempts,
        kafka: {
          client,
          routes,
        },
      });
      await runner.start();
    },
    async send(message) {
      await producer!.send([
        {
          topic: routes!.topics[0]!,
          key: message.key,
          value: message.body,
          headers: {
            ...message.headers,
            ...(typeof message.messageId === 'string' ? { messageId: message.messageId } : {}),
            ...(message.eventType !== undefined ? { eventType: message.eventType } : {}),
          },
        },
      ]);
    },
    metrics: () => runner!.metrics(),
    // The Kafka runner never restarts: a record it cannot settle is held and read again.
    restarts: () => runner!.metrics().settleFailures,
    deadLetters: () => lettersOf(kafkaDeadLetterSource({ client: client!, routes: () => routes! })),
    async stop() {
      await runner?.stop();
    },
    async cleanup() {
      await runner?.stop();
      await producer?.close().catch(() => undefined);
      await test?.admin.deleteGroups([routes?.groupId ?? '']).catch(() => undefined);
      await test?.cleanup();
    },
  };
}

function pulsar(): TransportUnderTest {
  let test: TestPulsar | undefined;
  let client: PulsarClient | undefined;
  let routes: PulsarConsumerRoutes | undefined;
  let producer: PulsarProducer | undefined;
  let runner: PulsarConsumerRunner | undefined;
  return {
    name: 'pulsar',
    deliversEveryType: true,
    // The broker's WebSocket frame (webSocketMaxTextFrameSize, 1 MiB) minus the test message's
    // other bytes: the message fits as it is, a copy with evgen's properties added does not.
    largestHeaderBytes: 1_048_576 - 2_000,
    async start(handler, maxAttempts) {
      test = await createTestPulsar();
      const topic = test.topic('order.events');
      const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
      routes = pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [RETRY_DELAY_MS] });
      // The consumer's own topics are this test's too: deleted at clean-up.
      test.topic(`${CONSUMER}.retry.${RETRY_DELAY_MS}ms`);
      test.topic(`${CONSUMER}.dlt`);
      client = pulsarWebSocketClient({ webServiceUrl: test.webUrl });
      producer = await client.producer(topic);
      // maxAttempts is the runner's (the shared option): one tier, repeated.
      runner = createPulsarConsumerRunner({ client, routes, handler, maxAttempts });
      await runner.start();
    },
    async send(message) {
      await producer!.send({
        key: message.key,
        payload: Buffer.from(message.body),
        properties: {
          ...message.headers,
          ...(typeof message.messageId === 'string' ? { messageId: message.messageId } : {}),
          ...(message.eventType !== undefined ? { eventType: message.eventType } : {}),
        },
      });
    },
    metrics: () => runner!.metrics(),
    // The Pulsar runner never restarts: a copy it cannot store is tried again, unacknowledged.
    restarts: () => runner!.metrics().settleFailures + runner!.metrics().brokerDeadLettered,
    deadLetters: () =>
      lettersOf(
        pulsarDeadLetterSource({
          client: client!,
          webServiceUrl: test!.webUrl,
          routes: () => routes!,
        }),
      ),
    async stop() {
      await runner?.stop();
    },
    async cleanup() {
      await runner?.stop();
      await producer?.close().catch(() => undefined);
      await test?.cleanup();
    },
  };
}
