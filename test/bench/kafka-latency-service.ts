/**
 * One service of the Kafka latency bench in its own process, as services deploy it: `relay` (the
 * polling outbox relay woken by NOTIFY, publishing through `kafkaRelayPublisher`) or `consumer`
 * (the Kafka consumer runner with an inbox-guarded handler). Prints `ready` once started, then
 * `<messageId> <ms>` per event (relay: the broker acknowledged it; consumer: the handler was
 * called), ms on the wall clock (`performance.timeOrigin + performance.now()`), so the parent can
 * set them against its commit times. SIGTERM stops it.
 *
 * argv: relay|consumer adapter brokers databaseUrl schema topicPrefix routesJson
 */
import pg from 'pg';
import {
  createKafkaConsumerRunner,
  createOutboxRelay,
  handleWithInbox,
  kafkaRelayPublisher,
  postgresDatabase,
  type Envelope,
} from '../../src/runtime/index.js';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { stockCountedEvent } from './stock-counted.js';

const [role, adapter, brokers, databaseUrl, schema, prefix, routesJson] = process.argv.slice(2) as [
  'relay' | 'consumer',
  string,
  string,
  string,
  string,
  string,
  string,
];
const client = KAFKA_CLIENTS.find((c) => c.name === adapter)!.create({ brokers: [brokers] });
// The application name lets the bench tell this service's PostgreSQL backends apart.
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: 10,
  application_name: `${schema}:${role}`,
});
pool.on('error', () => undefined);
const db = postgresDatabase(pool);
const now = () => performance.timeOrigin + performance.now();

// Lines are written in one chunk every 50 ms: the times are taken at the event, not at the write.
let pending = '';
const flush = setInterval(() => {
  if (pending === '') return;
  process.stdout.write(pending);
  pending = '';
}, 50);
const seen = (messageId: string) => (pending += `${messageId} ${now().toFixed(3)}\n`);

const TRACE = process.env.EVGEN_BENCH_TRACE === '1';
const handlerMs: number[] = [];
let inHandler = 0;
let peak = 0;
let stop: () => Promise<void>;
if (role === 'relay') {
  const producer = await client.producer();
  const relay = createOutboxRelay({
    db,
    schema,
    publisher: kafkaRelayPublisher(
      producer,
      { [stockCountedEvent().eventType]: { topic: 'latency' } },
      { prefix },
    ),
    hooks: { onPublished: (message) => seen(message.envelope.messageId) },
  });
  await relay.start();
  stop = async () => {
    await relay.stop();
    await producer.close();
  };
} else {
  const routes = JSON.parse(routesJson) as {
    consumer: string;
    groupId: string;
    topics: string[];
    retry: { topic: string; delayMs: number }[];
    deadLetter: string;
  };
  const runner = createKafkaConsumerRunner({
    kafka: { client, routes },
    handler: {
      name: routes.consumer,
      handle: async (raw) => {
        const envelope = raw as Envelope;
        seen(envelope.messageId);
        const from = performance.now();
        inHandler++;
        peak = Math.max(peak, inHandler);
        try {
          return await handleWithInbox(
            db,
            { schema, consumer: routes.consumer, envelope },
            async () => undefined,
          );
        } finally {
          inHandler--;
          if (TRACE) handlerMs.push(performance.now() - from);
        }
      },
    },
  });
  await runner.start();
  stop = async () => {
    if (TRACE) {
      const sorted = handlerMs.sort((a, b) => a - b);
      const at = (p: number) => sorted[Math.floor((p / 100) * (sorted.length - 1))]?.toFixed(1);
      process.stderr.write(
        `consumer: ${sorted.length} handled, inbox transaction p50 ${at(50)} p99 ${at(99)} ms, peak ${peak} in flight, ${JSON.stringify(runner.metrics())}\n`,
      );
    }
    await runner.stop();
  };
}
// EVGEN_BENCH_CPU_PROFILE=dir: a V8 CPU profile of this service, written at its stop.
const profileDir = process.env.EVGEN_BENCH_CPU_PROFILE;
const { Session } = await import('node:inspector/promises');
const session = new Session();
if (profileDir !== undefined) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void stop().finally(async () => {
    if (profileDir !== undefined) {
      const { profile } = await session.post('Profiler.stop');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(`${profileDir}/${role}-${process.pid}.cpuprofile`, JSON.stringify(profile));
    }
    clearInterval(flush);
    process.stdout.write(pending, () => process.exit(0));
  });
});
