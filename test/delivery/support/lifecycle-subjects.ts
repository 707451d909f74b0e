/**
 * The runners the lifecycle block of the conformance suite runs over: every consumer transport
 * (in-process, RabbitMQ, Kafka with each adapter, Pulsar) and the outbox relay, each behind one small
 * interface: a fresh runner over the same queue, topics or outbox, the connections it holds open
 * now (counted on the real connection objects), and a way to send one message whose handling is
 * one effect. What handling does (succeed, block, find a dependency down) is the test's
 * `behaviour`, so every runner is asked the same questions.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelModel } from 'amqplib';
import {
  createRabbitMqConsumerRunner,
  createKafkaConsumerRunner,
  createOutboxRelay,
  createPulsarConsumerRunner,
  pulsarConsumerTopics,
  pulsarWebSocketClient,
  ConfirmedPublisher,
  InProcessBroker,
  writeOutboxEvent,
  type CircuitBreakerOptions,
  type KafkaClient,
  type KafkaConnection,
  type KafkaConsumerRoutes,
  type KafkaProducer,
  type MessageHandler,
  type PulsarConsumerRoutes,
  type PulsarProducer,
  type PulsarWebSocketClient,
  type ResolvedTopology,
  type RunnerState,
} from 'evgen/runtime';
import { createTestKafka, KAFKA_CLIENTS, type TestKafka } from '../../support/kafka/test-kafka.js';
import { createTopicsSettled } from '../../kafka-consumer/support/inventory-on-kafka.js';
import {
  connectTestBroker,
  createTestBroker,
  SAMPLE_TOPOLOGY,
  type TestBroker,
} from '../../support/rabbitmq.js';
import { openOutbox, pgliteOnce, type OutboxFixture } from '../../outbox/support/dialects.js';
import { createTestPulsar, type TestPulsar } from '../../support/pulsar/test-pulsar.js';
import { orderPlacedV1 } from '../../outbox/support/test-event.js';

/** What handling one message does: resolves (the effect happened) or throws. */
export type Behaviour = (messageId: string) => Promise<void>;

export interface RunnerUnderTest {
  readonly state: RunnerState;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface LifecycleSubject {
  readonly name: string;
  /** Connections a running runner holds (channels, group consumers and producers, LISTENs). */
  readonly connectionsWhenRunning: number;
  setup(behaviour: Behaviour): Promise<void>;
  /** A fresh runner over the same queue, topics or outbox; its breaker stays open long. */
  runner(): RunnerUnderTest;
  /** Connections the runners of this subject hold open now. */
  connections(): number;
  /** Sends one message (writes one outbox row); resolves with its messageId. */
  send(): Promise<string>;
  cleanup(): Promise<void>;
}

const CONSUMER = 'inventory-service';
/** Long enough that the breaker is still open when the test stops the runner. */
const LONG_BREAKER: CircuitBreakerOptions = { backoff: { baseMs: 120_000, capMs: 120_000 } };

const handlerOf = (behaviour: Behaviour): MessageHandler => ({
  name: CONSUMER,
  handle: async (raw) => behaviour((raw as { messageId: string }).messageId),
});
const body = (messageId: string) => JSON.stringify({ messageId, eventType: 'order.Tested' });

export const LIFECYCLE_SUBJECTS: readonly { name: string; create(): LifecycleSubject }[] = [
  { name: 'in-process', create: inProcess },
  { name: 'rabbitmq', create: rabbitmq },
  ...KAFKA_CLIENTS.map((client) => ({
    name: `kafka (${client.name})`,
    create: () => kafka(client.name, client.create),
  })),
  { name: 'pulsar', create: pulsar },
  { name: 'outbox relay (postgres)', create: relay },
];

function inProcess(): LifecycleSubject {
  let behaviour: Behaviour;
  let broker: InProcessBroker | undefined;
  const brokers: InProcessBroker[] = [];
  return {
    name: 'in-process',
    // No connection: what it holds is its handlers in flight.
    connectionsWhenRunning: 0,
    async setup(given) {
      behaviour = given;
    },
    runner() {
      broker = new InProcessBroker({
        circuitBreaker: LONG_BREAKER,
        inProcess: {
          retryDelaysMs: [50],
          autoStart: false,
        },
      });
      brokers.push(broker);
      broker.subscribe({ ...handlerOf(behaviour), subscribes: ['order.Tested'] });
      return broker;
    },
    connections: () => brokers.reduce((sum, each) => sum + each.inFlight, 0),
    async send() {
      const messageId = randomUUID();
      broker!.publishRaw({
        messageId,
        eventType: 'order.Tested',
        body: body(messageId),
        headers: {},
      });
      return messageId;
    },
    async cleanup() {
      for (const each of brokers) each.close();
    },
  };
}

function rabbitmq(): LifecycleSubject {
  let behaviour: Behaviour;
  let broker: TestBroker | undefined;
  let topology: ResolvedTopology | undefined;
  let producer: ConfirmedPublisher | undefined;
  let connection: ChannelModel | undefined;
  let channels = 0;
  return {
    name: 'rabbitmq',
    connectionsWhenRunning: 1,
    async setup(given) {
      behaviour = given;
      broker = await createTestBroker();
      topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200], maxAttempts: 3 });
      producer = new ConfirmedPublisher(broker.connection);
      // The runners' own connection, whose consuming channels are counted as they open and close.
      connection = await connectTestBroker();
      const createChannel = connection.createChannel.bind(connection);
      connection.createChannel = async () => {
        const channel = await createChannel();
        channels++;
        channel.once('close', () => channels--);
        return channel;
      };
    },
    runner: () =>
      createRabbitMqConsumerRunner({
        handler: handlerOf(behaviour),
        circuitBreaker: LONG_BREAKER,
        rabbitmq: {
          connection: connection!,
          routes: topology!.consumers[CONSUMER]!,
        },
      }),
    connections: () => channels,
    async send() {
      const messageId = randomUUID();
      await producer!.publish(
        `${broker!.prefix}order`,
        'order.cancelled',
        Buffer.from(body(messageId)),
        {
          persistent: true,
          messageId,
          type: 'order.Tested',
          headers: {},
        },
      );
      return messageId;
    },
    async cleanup() {
      await producer?.close();
      await connection?.close().catch(() => undefined);
      await broker?.cleanup();
    },
  };
}

function kafka(
  adapter: string,
  create: (connection: KafkaConnection) => KafkaClient,
): LifecycleSubject {
  let behaviour: Behaviour;
  let test: TestKafka | undefined;
  let client: KafkaClient | undefined;
  let routes: KafkaConsumerRoutes | undefined;
  let producer: KafkaProducer | undefined;
  let open = 0;
  /** Counts what the runner opens (its group consumer, its producer) until it closes it. */
  const counted = <T extends { close(): Promise<void> }>(resource: T): T => {
    open++;
    const close = resource.close.bind(resource);
    let closed = false;
    resource.close = async () => {
      await close();
      if (!closed) open--;
      closed = true;
    };
    return resource;
  };
  return {
    name: `kafka (${adapter})`,
    connectionsWhenRunning: 2,
    async setup(given) {
      behaviour = given;
      test = await createTestKafka(create);
      client = create({ brokers: [test.brokers] });
      const [topic, deadLetter, retry] = await createTopicsSettled(test, [
        { topic: 'lifecycle.events', partitions: 2 },
        { topic: `${CONSUMER}.lifecycle.dlt`, partitions: 1 },
        { topic: `${CONSUMER}.lifecycle.retry`, partitions: 2 },
      ]);
      routes = {
        consumer: CONSUMER,
        groupId: `${test.prefix}${CONSUMER}-lifecycle`,
        topics: [topic!],
        retry: [{ topic: retry!, delayMs: 200 }],
        deadLetter: deadLetter!,
        maxAttempts: 3,
      };
      producer = await client.producer({ timeoutMs: 15_000 });
    },
    runner() {
      const base = client!;
      const countingClient: KafkaClient = {
        name: base.name,
        producer: async (options) => counted(await base.producer(options)),
        consumer: (options) => counted(base.consumer(options)),
        admin: () => base.admin(),
      };
      return createKafkaConsumerRunner({
        handler: handlerOf(behaviour),
        circuitBreaker: LONG_BREAKER,
        kafka: {
          client: countingClient,
          routes: routes!,
          sessionTimeoutMs: 6_000,
        },
      });
    },
    connections: () => open,
    async send() {
      const messageId = randomUUID();
      await producer!.send([
        {
          topic: routes!.topics[0]!,
          key: messageId,
          value: body(messageId),
          headers: { messageId, eventType: 'order.Tested' },
        },
      ]);
      return messageId;
    },
    async cleanup() {
      await producer?.close().catch(() => undefined);
      await test?.admin.deleteGroups([routes?.groupId ?? '']).catch(() => undefined);
      await test?.cleanup();
    },
  };
}

function pulsar(): LifecycleSubject {
  let behaviour: Behaviour;
  let test: TestPulsar | undefined;
  /** The runners' client, whose sockets are counted; the test's producer has its own. */
  let client: PulsarWebSocketClient | undefined;
  let routes: PulsarConsumerRoutes | undefined;
  let producer: PulsarProducer | undefined;
  return {
    name: 'pulsar',
    // One socket on the event topic, one on the retry tier's topic (producers open on a copy).
    connectionsWhenRunning: 2,
    async setup(given) {
      behaviour = given;
      test = await createTestPulsar();
      const topic = test.topic('lifecycle.events');
      const prefix = topic.slice('persistent://public/default/'.length, -'lifecycle.events'.length);
      routes = pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [200] });
      test.topic(`${CONSUMER}.retry.200ms`);
      test.topic(`${CONSUMER}.dlt`);
      client = pulsarWebSocketClient({ webServiceUrl: test.webUrl });
      producer = await pulsarWebSocketClient({ webServiceUrl: test.webUrl }).producer(topic);
    },
    runner: () =>
      createPulsarConsumerRunner({
        client: client!,
        routes: routes!,
        handler: handlerOf(behaviour),
        maxAttempts: 3,
        circuitBreaker: LONG_BREAKER,
      }),
    connections: () => client!.openSockets(),
    async send() {
      const messageId = randomUUID();
      await producer!.send({
        key: messageId,
        payload: Buffer.from(body(messageId)),
        properties: { messageId, eventType: 'order.Tested' },
      });
      return messageId;
    },
    async cleanup() {
      await producer?.close().catch(() => undefined);
      await test?.cleanup();
    },
  };
}

function relay(): LifecycleSubject {
  let behaviour: Behaviour;
  const pglite = pgliteOnce();
  let fixture: OutboxFixture | undefined;
  let listens = 0;
  return {
    name: 'outbox relay (postgres)',
    connectionsWhenRunning: 1,
    async setup(given) {
      behaviour = given;
      fixture = await openOutbox('postgres', pglite);
    },
    runner() {
      const f = fixture!;
      // LISTENs are counted as they open and close.
      const db = Object.create(f.db) as typeof f.db;
      db.listen = async (...args: Parameters<typeof f.db.listen>) => {
        const unlisten = await f.db.listen(...args);
        listens++;
        let closed = false;
        return async () => {
          await unlisten();
          if (!closed) listens--;
          closed = true;
        };
      };
      return createOutboxRelay({
        db,
        schema: f.schema,
        notifyChannel: f.channel,
        publisher: { publish: (message) => behaviour(message.envelope.messageId) },
        pollIntervalMs: 200,
        // The relay's breaker is a row's outage backoff: the row is due again after it.
        unavailableBackoff: { baseMs: 10_000, capMs: 10_000, jitter: 0 },
        backoff: { baseMs: 100, capMs: 100 },
      });
    },
    connections: () => listens,
    async send() {
      const envelope = await fixture!.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: randomUUID(), amount: 1 },
          {},
          { schema: fixture!.schema, notifyChannel: fixture!.channel },
        ),
      );
      return envelope.messageId;
    },
    async cleanup() {
      await fixture?.close();
      await pglite.close();
    },
  };
}
