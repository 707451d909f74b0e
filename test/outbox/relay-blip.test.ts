/**
 * A short broker blip while the relay has 1, 8 or 50 rows in flight, on both brokers with the
 * relay's default outage backoff: the publishes in flight fail together, which is ONE failed
 * round (one backoff step of 0.5 s), not one step per row; a row written when the blip ends is
 * published within 5 s.
 * - RabbitMQ: the relay reaches the broker through the TCP fault proxy; bytes are held while the
 *   k publishes start, then every connection is reset and new ones refused for 300 ms.
 * - Kafka (each adapter): a broker of its own, paused (SIGSTOP) while the k publishes start and
 *   until every send in flight has failed its 1 s bound, then continued.
 *
 * A send queued behind a failed one, and the publisher's probe, are bounded by the producer's
 * `timeoutMs` although the new producer they wait for cannot connect to the paused broker.
 *
 * And a longer outage whose backoff has grown to a 12 s step (base 3 s: rounds fail at 0, 3 and
 * 9 s): when the broker returns, the publisher's probe sees it reconnect and the relay publishes
 * a new row within 5 s, not after the rest of the step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createAmqpConnector,
  createOutboxRelay,
  KafkaTimeoutError,
  kafkaRelayPublisher,
  migrateOutbox,
  postgresDatabase,
  rabbitRelayPublisher,
  writeOutboxEvent,
  type Database,
  type Publisher,
} from 'evgen/runtime';
import { threadStates } from '../support/broker-process.js';
import { pauseBroker } from '../support/kafka/broker-stall.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { createTestSchema } from '../support/postgres.js';
import { SAMPLE_TOPOLOGY, createTestBroker, waitFor } from '../support/rabbitmq.js';
import {
  isKafkaProcess,
  startExtraKafkaBroker,
  type ExtraKafkaBroker,
} from '../support/kafka/broker.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { orderPlacedV1 } from './support/test-event.js';

const IN_FLIGHT = [1, 8, 50] as const;
const RECOVERY_LIMIT_MS = 5_000;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Publishes started and not settled yet, and every message a publish was started for. On a busy
 * machine the first sends can fail their 1 s bound before the k-th starts, so "k rows tried while
 * the broker is held" is counted by message, not by the number in flight at one instant.
 */
function countingPublisher(inner: Publisher) {
  const state = { inFlight: 0, peakInFlight: 0, tried: new Set<string>() };
  const publisher: Publisher = {
    publish(message) {
      state.inFlight++;
      state.peakInFlight = Math.max(state.peakInFlight, state.inFlight);
      state.tried.add(message.envelope.messageId);
      return inner.publish(message).finally(() => state.inFlight--);
    },
  };
  return { publisher, state };
}

async function writeRows(db: Database, schema: string, orderIds: readonly string[]) {
  return db.transaction(async (tx) => {
    const ids: string[] = [];
    for (const orderId of orderIds) {
      const envelope = await writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId, amount: 1 },
        {},
        { schema, notifyChannel: false },
      );
      ids.push(envelope.messageId);
    }
    return ids;
  });
}

interface BlipRun {
  readonly db: Database;
  readonly schema: string;
  readonly publisher: Publisher;
  /** Starts the fault: from now on no publish can complete. */
  readonly holdBroker: () => Promise<void>;
  /** Ends the fault after the k publishes started; resolves when the broker is reachable again. */
  readonly blip: (inFlight: () => number) => Promise<void>;
}

/**
 * Writes one row per aggregate while the broker is held, waits for k publishes in flight, blips,
 * then writes a marker row and measures how long it takes to be published.
 */
async function measureRecovery(run: BlipRun, k: number): Promise<number> {
  const { db, schema } = run;
  const counting = countingPublisher(run.publisher);
  const published = new Map<string, number>();
  const relay = createOutboxRelay({
    db,
    schema,
    notifyChannel: false,
    pollIntervalMs: 100,
    publisher: counting.publisher,
    hooks: { onPublished: (message) => published.set(message.envelope.messageId, Date.now()) },
  });
  try {
    await relay.start();
    // One row first, published while the broker is healthy (connections open).
    const [warm] = await writeRows(db, schema, ['warm-up']);
    await waitFor('the warm-up row published', () => (published.has(warm!) ? true : undefined));
    await run.holdBroker();
    const rows = await writeRows(
      db,
      schema,
      Array.from({ length: k }, (_, i) => `order-${i}`),
    );
    await waitFor(
      `a publish started for each of the ${k} rows`,
      () => (rows.every((id) => counting.state.tried.has(id)) ? true : undefined),
      30_000,
    );
    await run.blip(() => counting.state.inFlight);
    const backAt = Date.now();
    const [marker] = await writeRows(db, schema, ['marker']);
    await waitFor(
      'the marker row published',
      () => (published.has(marker!) ? true : undefined),
      60_000,
    );
    const recoveryMs = published.get(marker!)! - backAt;
    await waitFor(
      'every row published',
      () => (rows.every((id) => published.has(id)) ? true : undefined),
      60_000,
    );
    const metrics = relay.metrics();
    console.log(
      `[relay-blip] ${k} rows held (peak ${counting.state.peakInFlight} in flight): ${metrics.unavailable} failed publishes, marker published ${recoveryMs} ms after the blip`,
    );
    // The blip was felt (publishes failed), nothing went DEAD, and the relay came back quickly.
    expect(metrics.unavailable).toBeGreaterThan(0);
    expect(metrics.dead).toBe(0);
    return recoveryMs;
  } finally {
    await relay.stop({ timeoutMs: 5_000 });
  }
}

/** The step the long-outage tests wait for: the third failed round's delay (base 3 s, 3·2²). */
const GROWN_STEP_MS = 12_000;

interface OutageRun {
  readonly db: Database;
  readonly schema: string;
  readonly publisher: Publisher;
  /** The broker goes away (no publish or connection can succeed). */
  readonly down: () => Promise<void>;
  /** The broker is back. */
  readonly up: () => Promise<void>;
}

/**
 * Takes the broker away until the relay's backoff step has grown to GROWN_STEP_MS, brings it
 * back, writes a row of a new aggregate and returns how long after the return it was published.
 */
async function measureReturn(run: OutageRun): Promise<{ recoveryMs: number; stepMs: number }> {
  const { db, schema } = run;
  const published = new Map<string, number>();
  let stepMs = 0;
  const relay = createOutboxRelay({
    db,
    schema,
    notifyChannel: false,
    pollIntervalMs: 100,
    unavailableBackoff: { baseMs: 3_000, capMs: 60_000, jitter: 0 },
    publisher: run.publisher,
    hooks: {
      onPublished: (message) => published.set(message.envelope.messageId, Date.now()),
      onFailed: (_message, failure) => {
        if (failure.unavailable === true) stepMs = Math.max(stepMs, failure.retryInMs ?? 0);
      },
    },
  });
  try {
    await relay.start();
    const [warm] = await writeRows(db, schema, ['warm-up']);
    await waitFor('the warm-up row published', () => (published.has(warm!) ? true : undefined));
    await run.down();
    const [stuck] = await writeRows(db, schema, ['stuck']);
    await waitFor(
      `a backoff step of ${GROWN_STEP_MS} ms`,
      () => (stepMs >= GROWN_STEP_MS ? true : undefined),
      60_000,
    );
    await run.up();
    const backAt = Date.now();
    const [marker] = await writeRows(db, schema, ['marker']);
    await waitFor(
      'the marker row published',
      () => (published.has(marker!) ? true : undefined),
      60_000,
    );
    const recoveryMs = published.get(marker!)! - backAt;
    // The row that failed through the outage is published as well once the outage ended.
    await waitFor(
      'the stuck row published',
      () => (published.has(stuck!) ? true : undefined),
      60_000,
    );
    console.log(
      `[relay-return] backoff step ${stepMs} ms; a new row published ${recoveryMs} ms after the broker returned`,
    );
    expect(relay.metrics().dead).toBe(0);
    return { recoveryMs, stepMs };
  } finally {
    await relay.stop({ timeoutMs: 5_000 });
  }
}

describe('relay recovery after a broker blip: RabbitMQ (TCP fault proxy)', () => {
  it.each(IN_FLIGHT)(
    '%i rows in flight: publishing again within 5 s',
    async (k) => {
      const broker = await createTestBroker();
      const pgSchema = await createTestSchema('evgen_relay_blip');
      const proxy = await startFaultProxy({ targetPort: 5672 });
      const connector = createAmqpConnector({
        url: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
        connectionName: 'evgen relay blip',
      });
      try {
        await broker.declare(SAMPLE_TOPOLOGY);
        const db = postgresDatabase(pgSchema.pool);
        await migrateOutbox(db, { schema: pgSchema.schema });
        const confirmed = new ConfirmedPublisher(connector);
        const recoveryMs = await measureRecovery(
          {
            db,
            schema: pgSchema.schema,
            publisher: rabbitRelayPublisher(
              confirmed,
              { [orderPlacedV1.eventType]: { exchange: 'order', routingKey: 'order.created' } },
              { prefix: broker.prefix },
            ),
            holdBroker: async () => proxy.blackhole(),
            blip: async () => {
              await proxy.refuse();
              proxy.dropAll();
              await delay(300);
              await proxy.restore();
            },
          },
          k,
        );
        expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
      } finally {
        await connector.close().catch(() => undefined);
        await proxy.close();
        await broker.cleanup();
        await pgSchema.drop();
      }
    },
    120_000,
  );

  it('after an outage whose backoff grew to a 12 s step: the reconnect ends it, a new row is published within 5 s', async () => {
    const broker = await createTestBroker();
    const pgSchema = await createTestSchema('evgen_relay_return');
    const proxy = await startFaultProxy({ targetPort: 5672 });
    const connector = createAmqpConnector({
      url: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
      connectionName: 'evgen relay return',
      // The connector retries with its own backoff; the reconnect comes within its cap.
      backoff: { capMs: 1_000 },
    });
    try {
      await broker.declare(SAMPLE_TOPOLOGY);
      const db = postgresDatabase(pgSchema.pool);
      await migrateOutbox(db, { schema: pgSchema.schema });
      const { recoveryMs, stepMs } = await measureReturn({
        db,
        schema: pgSchema.schema,
        publisher: rabbitRelayPublisher(
          new ConfirmedPublisher(connector),
          { [orderPlacedV1.eventType]: { exchange: 'order', routingKey: 'order.created' } },
          { prefix: broker.prefix },
        ),
        down: async () => {
          await proxy.refuse();
          proxy.dropAll();
        },
        up: () => proxy.restore(),
      });
      expect(stepMs).toBeGreaterThanOrEqual(GROWN_STEP_MS);
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    } finally {
      await connector.close().catch(() => undefined);
      await proxy.close();
      await broker.cleanup();
      await pgSchema.drop();
    }
  }, 120_000);
});

let kafkaBroker: ExtraKafkaBroker | undefined;

describe.each(KAFKA_CLIENTS)('relay recovery after a broker blip: Kafka $name', ({ create }) => {
  beforeAll(async () => {
    kafkaBroker ??= await startExtraKafkaBroker();
  }, 180_000);

  it.each(IN_FLIGHT)(
    '%i rows in flight: publishing again within 5 s',
    async (k) => {
      const kafka = await createTestKafka(create, kafkaBroker!.brokers);
      const pgSchema = await createTestSchema('evgen_relay_blip');
      const pid = kafkaBroker!.pid()!;
      let paused = false;
      const producer = await create({ brokers: [kafkaBroker!.brokers] }).producer({
        timeoutMs: 1_000,
      });
      try {
        await kafka.createTopics([{ topic: 'orders', partitions: 6 }]);
        const db = postgresDatabase(pgSchema.pool);
        await migrateOutbox(db, { schema: pgSchema.schema });
        const recoveryMs = await measureRecovery(
          {
            db,
            schema: pgSchema.schema,
            publisher: kafkaRelayPublisher(
              producer,
              { [orderPlacedV1.eventType]: { topic: 'orders' } },
              { prefix: kafka.prefix },
            ),
            holdBroker: async () => {
              paused = true;
              await pauseBroker(pid);
            },
            blip: async (inFlight) => {
              // Paused until every send in flight has failed its 1 s bound.
              await waitFor('the sends in flight failed', () =>
                inFlight() === 0 ? true : undefined,
              );
              await delay(300);
              process.kill(pid, 'SIGCONT');
              paused = false;
            },
          },
          k,
        );
        expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
      } finally {
        if (paused && isKafkaProcess(pid)) process.kill(pid, 'SIGCONT');
        await producer.close().catch(() => undefined);
        await kafka.cleanup().catch(() => undefined);
        await pgSchema.drop();
      }
    },
    120_000,
  );

  // What the blip above relies on: after a failed send, the next one connects a new producer,
  // and the paused broker does not answer that connect either (the library would wait its 30 s
  // request timeout and retry); the send's bound covers it, and so does the probe's.
  it('a send queued behind a failed one, and a probe, reject within their bound while the new producer cannot connect', async () => {
    const kafka = await createTestKafka(create, kafkaBroker!.brokers);
    const pid = kafkaBroker!.pid()!;
    let paused = false;
    const producer = await create({ brokers: [kafkaBroker!.brokers] }).producer({
      timeoutMs: 1_000,
    });
    try {
      const [topic] = await kafka.createTopics([{ topic: 'bounded', partitions: 1 }]);
      const record = (value: string) => [{ topic: topic!, key: 'k', value }];
      await producer.send(record('warm-up'));
      paused = true;
      await pauseBroker(pid);
      const failed = producer.send(record('a'));
      const queued = producer.send(record('b'));
      const probe = producer.probe!();
      // Acknowledged by a paused broker cannot be: say what its threads were doing if it was.
      const failure = await failed.then(
        () => new Error(`acknowledged; broker threads now ${threadStates(pid).join(' ')}`),
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(KafkaTimeoutError);
      await expect(queued).rejects.toBeInstanceOf(KafkaTimeoutError);
      await expect(probe).rejects.toBeInstanceOf(KafkaTimeoutError);
      process.kill(pid, 'SIGCONT');
      paused = false;
      // The broker answers again: the producer connects and sends.
      await waitFor(
        'a send acknowledged after the broker continued',
        () =>
          producer.send(record('c')).then(
            () => true,
            () => undefined,
          ),
        30_000,
      );
    } finally {
      if (paused && isKafkaProcess(pid)) process.kill(pid, 'SIGCONT');
      await producer.close().catch(() => undefined);
      await kafka.cleanup().catch(() => undefined);
    }
  }, 120_000);

  it('after an outage whose backoff grew to a 12 s step: the reconnect ends it, a new row is published within 5 s', async () => {
    const kafka = await createTestKafka(create, kafkaBroker!.brokers);
    const pgSchema = await createTestSchema('evgen_relay_return');
    const pid = kafkaBroker!.pid()!;
    let paused = false;
    const producer = await create({ brokers: [kafkaBroker!.brokers] }).producer({
      timeoutMs: 1_000,
    });
    try {
      await kafka.createTopics([{ topic: 'orders', partitions: 6 }]);
      const db = postgresDatabase(pgSchema.pool);
      await migrateOutbox(db, { schema: pgSchema.schema });
      const { recoveryMs, stepMs } = await measureReturn({
        db,
        schema: pgSchema.schema,
        publisher: kafkaRelayPublisher(
          producer,
          { [orderPlacedV1.eventType]: { topic: 'orders' } },
          { prefix: kafka.prefix },
        ),
        down: async () => {
          paused = true;
          await pauseBroker(pid);
        },
        up: async () => {
          process.kill(pid, 'SIGCONT');
          paused = false;
        },
      });
      expect(stepMs).toBeGreaterThanOrEqual(GROWN_STEP_MS);
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    } finally {
      if (paused && isKafkaProcess(pid)) process.kill(pid, 'SIGCONT');
      await producer.close().catch(() => undefined);
      await kafka.cleanup().catch(() => undefined);
      await pgSchema.drop();
    }
  }, 120_000);
});

afterAll(async () => {
  await kafkaBroker?.destroy();
}, 60_000);
