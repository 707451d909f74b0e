/**
 * Commit → handler latency on Kafka, end to end with every default, per client adapter, with the
 * services in their own processes as they are deployed: this process writes outbox rows (one
 * transaction per event, 200 aggregates) at a steady rate, a relay process (the polling relay
 * woken by the commit's NOTIFY) publishes them, a consumer process (the Kafka consumer runner)
 * hands each to an inbox-guarded handler. The first seconds of the stream are a warm-up (group
 * joined, connections, JIT); only events committed in the timed window after it count.
 * Measured per event from the writer's commit to the handler's call (p99 against the goal of
 * 100 ms, p50 in the note), and from the commit to the broker's acknowledgement of its send.
 * The knobs that set it (defaults): the relay's wake (NOTIFY, then `minPollIntervalMs`), the
 * relay publisher's coalescing (sends go out as soon as the one before is acknowledged; no
 * linger), and the consumer's fetch wait (500 ms, returns at the first record).
 *
 * EVGEN_BENCH_RATE: events per second offered (default 500). EVGEN_BENCH_SECONDS: the timed
 * window (default 10; warm-up 3 s before it). EVGEN_BENCH_KAFKA_CLIENTS: adapters to run
 * (comma-separated names, default all).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import {
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
} from '../../src/runtime/index.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import { SMOKE, median, percentile, type BenchResult } from './bench-result.js';
import { until } from './bench-timing.js';
import { startCpuMeasurement } from './process-cpu.js';
import { stockCountedEvent } from './stock-counted.js';

const RATE = Number(process.env.EVGEN_BENCH_RATE ?? 500);
const TIMED_MS = SMOKE ? 500 : Number(process.env.EVGEN_BENCH_SECONDS ?? 10) * 1_000;
const WARM_UP_MS = SMOKE ? 500 : 3_000;
const AGGREGATES = 200;
const GOAL_P99_MS = 100;
const CLIENTS = (process.env.EVGEN_BENCH_KAFKA_CLIENTS ?? '').split(',').filter(Boolean);
const serviceScript = fileURLToPath(new URL('./kafka-latency-service.ts', import.meta.url));

const stockCounted = stockCountedEvent();
const now = () => performance.timeOrigin + performance.now();

/** Polls every 20 ms: the bench process's CPU (the writers') is measured while it waits. */
const POLL_MS = 20;

interface Service {
  readonly process: ChildProcessWithoutNullStreams;
  /** messageId → wall-clock ms of its acknowledgement (relay) or handler call (consumer). */
  readonly times: Map<string, number>;
  stop(): Promise<void>;
}

/** Starts a service process; resolves once it printed `ready`. */
async function startService(args: readonly string[]): Promise<Service> {
  const child = spawnTypeScript(serviceScript, args, 'ignore');
  const times = new Map<string, number>();
  let ready = false;
  let rest = '';
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
    process.stderr.write(chunk);
  });
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (line === 'ready') ready = true;
      const [id, at] = line.split(' ');
      if (at !== undefined) times.set(id!, Number(at));
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([
    until(`${args[0]} ready`, () => ready, 60_000, POLL_MS),
    exited.then(() => {
      throw new Error(`${args[0]} process exited early: ${errors}`);
    }),
  ]);
  return {
    process: child,
    times,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** PostgreSQL backend PIDs per role of this run's pools (their application names). */
async function backends(db: Database, schema: string, into: Map<number, string>): Promise<void> {
  const rows = await db.query<{ pid: number; role: string }>(
    `SELECT pid, split_part(application_name, ':', 2) AS role FROM pg_stat_activity WHERE application_name LIKE $1`,
    [`${schema}:%`],
  );
  for (const { pid, role } of rows.rows) into.set(pid, role);
}

/**
 * CPU of this process (the writers), the two services, their PostgreSQL backends, the rest of
 * PostgreSQL (WAL writer, checkpointer, other sessions) and the broker, from now on.
 */
function cpuOf(consumer: Service, relay: Service, pids: ReadonlyMap<number, string>) {
  const backend = (role: string) => (pid: number) => pids.get(pid) === role;
  return startCpuMeasurement([
    { name: 'writer', matches: (pid) => pid === process.pid },
    { name: 'relay', matches: (pid) => pid === relay.process.pid },
    { name: 'consumer', matches: (pid) => pid === consumer.process.pid },
    { name: 'writerBackends', matches: backend('writer') },
    { name: 'relayBackends', matches: backend('relay') },
    { name: 'consumerBackends', matches: backend('consumer') },
    {
      name: 'postgres',
      matches: (pid, _ppid, cmdline) =>
        !pids.has(pid) && /^postgres:|\/bin\/postgres /.test(cmdline),
    },
    {
      name: 'broker',
      matches: (_pid, _ppid, cmdline) =>
        cmdline.includes('kafka.Kafka') && cmdline.includes('evgen-kafka-shared'),
    },
  ]);
}

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    if (CLIENTS.length > 0 && !CLIENTS.includes(name)) continue;
    const kafka = await createTestKafka(create);
    const test = await createTestSchema('evgen_bench_kafka_latency');
    const { schema } = test;
    const writerPool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max: 10,
      application_name: `${schema}:writer`,
    });
    writerPool.on('error', () => undefined);
    const db = postgresDatabase(writerPool);
    const commitTimes = new Map<string, number>();
    const services: Service[] = [];
    try {
      await migrateOutbox(db, { schema });
      await migrateInbox(db, { schema });
      const [topic, retry, deadLetter] = await kafka.createTopics([
        { topic: 'latency', partitions: 6 },
        { topic: 'latency-consumer.retry.1s', partitions: 6 },
        { topic: 'latency-consumer.dlt', partitions: 1 },
      ]);
      const routes = {
        consumer: 'latency-consumer',
        groupId: kafka.group('latency-runner'),
        topics: [topic!],
        retry: [{ topic: retry!, delayMs: 1_000 }],
        deadLetter: deadLetter!,
      };
      const common = [name, kafka.brokers, TEST_DATABASE_URL, schema, kafka.prefix];
      const consumer = await startService(['consumer', ...common, JSON.stringify(routes)]);
      services.push(consumer);
      const relay = await startService(['relay', ...common, '{}']);
      services.push(relay);
      const write = (i: number, timed: boolean) =>
        db
          .transaction((tx) =>
            writeOutboxEvent(
              tx,
              stockCounted,
              { sku: `SKU-${i % AGGREGATES}`, quantity: i },
              {},
              { schema },
            ),
          )
          .then((envelope) => {
            if (timed) commitTimes.set(envelope.messageId, now());
          });
      // One steady stream: the warm-up's events are written and handled, not counted.
      const warmUp = Math.round((WARM_UP_MS * RATE) / 1_000);
      const total = warmUp + Math.round((TIMED_MS * RATE) / 1_000);
      const pids = new Map<number, string>();
      let cpu: (() => ReturnType<ReturnType<typeof startCpuMeasurement>>) | undefined;
      const started = performance.now();
      const writers: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const wait = started + (i * 1_000) / RATE - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        if (i === warmUp) {
          await backends(db, schema, pids);
          cpu = cpuOf(consumer, relay, pids);
        }
        writers.push(write(i, i >= warmUp));
      }
      const writing = performance.now() - started;
      await Promise.all(writers);
      await until(
        'every timed event handled',
        () => [...commitTimes.keys()].every((id) => consumer.times.has(id)),
        180_000,
        POLL_MS,
      );
      await backends(db, schema, pids);
      const used = cpu!();
      const perThousand = (ms: number) => ((ms * 1_000) / commitTimes.size).toFixed(0);
      const g = used.groups as Record<string, number>;
      const cpuNote = `CPU ms per 1 000 events (process + its PostgreSQL backends): writer ${perThousand(g.writer!)} + ${perThousand(g.writerBackends!)}, relay ${perThousand(g.relay!)} + ${perThousand(g.relayBackends!)}, consumer ${perThousand(g.consumer!)} + ${perThousand(g.consumerBackends!)}, rest of PostgreSQL (all sessions) ${perThousand(g.postgres!)}, broker ${perThousand(used.groups.broker!)}; machine ${((100 * used.machineBusyMs) / used.machineCapacityMs).toFixed(0)}% busy`;
      const toHandler = [...commitTimes].map(([id, at]) => consumer.times.get(id)! - at);
      const toAck = [...commitTimes].map(([id, at]) => relay.times.get(id)! - at);
      const offered = `${commitTimes.size} events at ${RATE}/s offered (${((total * 1_000) / writing).toFixed(0)}/s written) after a ${WARM_UP_MS / 1_000} s warm-up, relay and consumer in their own processes, polling relay woken by NOTIFY, defaults`;
      results.push(
        {
          name: `Kafka (${name}) end to end, ${offered}: commit → handler p99`,
          unit: 'ms',
          subject: percentile(toHandler, 99),
          baselineName: `the goal, p99 ≤ ${GOAL_P99_MS} ms`,
          baseline: GOAL_P99_MS,
          goal: { ratio: 1, better: 'lower' },
          note: `p50 ${median(toHandler).toFixed(0)} ms, max ${Math.max(...toHandler).toFixed(0)} ms; one sample; ${cpuNote}`,
        },
        {
          name: `Kafka (${name}) relay, ${offered}: commit → broker acknowledgement p99`,
          unit: 'ms',
          subject: percentile(toAck, 99),
          baselineName: `the end-to-end goal, p99 ≤ ${GOAL_P99_MS} ms`,
          baseline: GOAL_P99_MS,
          note: `p50 ${median(toAck).toFixed(0)} ms, max ${Math.max(...toAck).toFixed(0)} ms; one sample`,
        },
      );
    } finally {
      for (const service of services.reverse()) await service.stop();
      await writerPool.end();
      await kafka.cleanup();
      await test.drop();
    }
  }
  return results;
}
