/**
 * What the CDC relay benches (PostgreSQL and MariaDB sources) share: the event they write, the
 * Connect worker's JVM flags and JIT warm-up, a kafkajs consumer per topic that records when each
 * messageId arrived, samples timed from the first write until the consumer has seen every event
 * (with CPU per process group), the raw producer's sample every path is compared with, and the
 * summaries of the samples.
 */
import { randomUUID } from 'node:crypto';
import {
  createOutboxRelay,
  kafkaRelayPublisher,
  migrateOutbox,
  writeCdcOutboxEvents,
  writeOutboxEvent,
  type Database,
  type Envelope,
  type OutboxWriteOptions,
} from '../../src/runtime/index.js';
import type {
  KafkaClient,
  KafkaInboundRecord,
  KafkaProducer,
} from '../../src/runtime/kafka/kafka-client.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { kafkajsClient } from '../../src/runtime/kafkajs.js';
import type { OutboxRelay } from '../../src/runtime/outbox/relay.js';
import type { CdcSource, CdcSourceOptions } from '../cdc/support/cdc-source.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { createTestKafka } from '../support/kafka/test-kafka.js';
import { SAMPLES, SMOKE, median, percentile, type BenchResult } from './bench-result.js';
import { startCpuMeasurement, type CpuUsage, type ProcessGroup } from './process-cpu.js';
import {
  stockCountedEvent,
  type StockCounted,
  type StockCountedDescriptor,
} from './stock-counted.js';

/**
 * Events per sample of the raw producer, the batch writer and the server-side inserts: at
 * 3,000–8,000 events/s a sample of 5,000 lasted about a second, so one burst of other work on
 * the shared machine decided it (the same path measured 1,300–6,700 events/s within a minute).
 */
export const MESSAGES = SMOKE ? 200 : 20_000;
export const AGGREGATES = 200;
/** Events per transaction (CDC, relay) and per awaited send (raw). */
export const BATCH = 100;

/**
 * The Connect worker's JVM flags in the benches: the default tiered JIT (C2) with a fixed heap,
 * as an operator runs a worker, not the tests' start-up flags (C1 only). SerialGC, as the JVM
 * itself picks on small machines: on 2 shared cores a concurrent collector's threads would
 * compete with every other process of the pipeline.
 */
const WORKER_JVM_FLAGS = [
  '-Xms512m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:+ExitOnOutOfMemoryError',
];

/**
 * The commit → consumer latency: transactions of 10 events at EVGEN_BENCH_LATENCY_RATE events/s
 * (default 200: one every 50 ms), EVGEN_BENCH_LATENCY_EVENTS of them (default 1 000).
 */
const LATENCY_RATE = Number(process.env.EVGEN_BENCH_LATENCY_RATE ?? 200);
const PACED_TRANSACTIONS = SMOKE
  ? 10
  : Math.ceil(Number(process.env.EVGEN_BENCH_LATENCY_EVENTS ?? 1_000) / 10);
const LATENCY_PACE = `${PACED_TRANSACTIONS} transactions of 10 events at ${LATENCY_RATE} events/s`;

/** What every CDC throughput row is compared with (see `rawSample`). */
export const RAW_BASELINE = 'raw kafkajs idempotent producer (acks=all), sends of 100 awaited';

/** The JIT warm-up: at least the first and at most the second number of samples. */
const MIN_WARM_UP_SAMPLES = SMOKE ? 1 : 8;
const MAX_WARM_UP_SAMPLES = SMOKE ? 1 : 15;

/** The process groups whose CPU a sample reports: this Node process, the database, the worker, the broker. */
function cdcCpuGroups(database: ProcessGroup, workerPid: () => number | undefined): ProcessGroup[] {
  return [
    { name: 'node', matches: (pid) => pid === process.pid },
    database,
    { name: 'connect', matches: (pid) => pid === workerPid() },
    {
      name: 'broker',
      matches: (_pid, _ppid, cmdline) =>
        cmdline.includes('kafka.Kafka') && cmdline.includes('evgen-kafka-shared'),
    },
  ];
}

type TestKafka = Awaited<ReturnType<typeof createTestKafka>>;

export interface CdcBenchHarness {
  /**
   * Runs `work` (which returns the ids it wrote or sent) as a sample of `path`: events/s from
   * its start until the consumer has seen them all; records the write rate and CPU use.
   */
  timedRate(path: string, count: number, work: () => Promise<readonly string[]>): Promise<number>;
  /** The raw producer's sample: the same records sent in awaited sends of BATCH. */
  rawSample(count: number): Promise<number>;
  /**
   * A sample of `path` that writes its events into `db` in transactions of BATCH (`batched`: one
   * writeCdcOutboxEvents call per transaction, else one writeOutboxEvent per event) and returns
   * events/s until the consumer has seen them all (see `timedRate`).
   */
  writeSample(
    path: string,
    db: Database,
    options: OutboxWriteOptions,
    batched?: boolean,
  ): (count: number) => Promise<number>;
  /**
   * Samples `path` until the Connect worker's CPU per event settles: at least
   * MIN_WARM_UP_SAMPLES, then two in a row within 10% of each other (C2 compiles in bursts;
   * CPU per event measured at a plateau of 140–160 ms per 1,000 events 100,000 events in before
   * falling to 46–55). Returns the number of samples taken, which the summaries skip.
   */
  warmUpWorker(path: string, sample: (count: number) => Promise<number>): Promise<number>;
  /**
   * SAMPLES rounds of every path, every other round in reverse order, so no path always runs
   * right after another: on a shared machine the load drifts within a round, and a fixed order
   * would bias one side. Each round pushes one rate per path into its array.
   */
  alternate(
    paths: readonly [rates: number[], sample: (count: number) => Promise<number>, count: number][],
  ): Promise<void>;
  /**
   * Commit → consumer latency per event (ms) of PACED_TRANSACTIONS transactions of 10 events
   * at LATENCY_RATE written into `db` (`batched` as in `writeSample`).
   */
  latencies(db: Database, options: OutboxWriteOptions, batched?: boolean): Promise<number[]>;
  /** Median write rate of `path`'s samples after its first `skip`. */
  writing(path: string, skip?: number): string;
  /** CPU ms per 1,000 events by process group (medians after the first `skip` samples) and machine load. */
  cpuPer1000(path: string, skip?: number): string;
  close(): Promise<void>;
}

/**
 * Starts a consumer on each topic (all recording into one arrival map) and returns the sampling
 * helpers. `rawTopic` is where the raw producer sends.
 */
async function cdcBenchHarness(options: {
  readonly kafka: TestKafka;
  readonly client: KafkaClient;
  readonly producer: KafkaProducer;
  readonly topics: readonly string[];
  readonly rawTopic: string;
  readonly event: StockCountedDescriptor;
  readonly cpuGroups: readonly ProcessGroup[];
}): Promise<CdcBenchHarness> {
  const { kafka, client, producer, event, cpuGroups } = options;
  const received = new Map<string, number>();
  const waiting = new Set<{ ids: Set<string>; resolve: () => void }>();
  const onRecord = async (record: KafkaInboundRecord) => {
    const id = record.headers.messageId;
    if (typeof id !== 'string' || received.has(id)) return;
    received.set(id, Date.now());
    for (const waiter of waiting) {
      waiter.ids.delete(id);
      if (waiter.ids.size === 0) {
        waiting.delete(waiter);
        waiter.resolve();
      }
    }
  };
  const consumers: { close(): Promise<void> }[] = [];
  for (const topic of options.topics) {
    const consumer = client.consumer({ groupId: kafka.group(`bench-${topic}`), topics: [topic] });
    consumers.push(consumer);
    await consumer.start({ onRecord });
  }
  const arrival = (ids: readonly string[]) =>
    new Promise<void>((resolve) => {
      const pending = new Set(ids.filter((id) => !received.has(id)));
      if (pending.size === 0) resolve();
      else waiting.add({ ids: pending, resolve });
    });

  let counter = 0;
  const nextPayload = (): StockCounted => {
    const n = counter++;
    return { sku: `SKU-${n % AGGREGATES}`, quantity: n };
  };

  /** CPU use and write rates per path and sample (see process-cpu.ts). */
  const cpu = new Map<string, { usage: CpuUsage; count: number }[]>();
  const writeRates = new Map<string, number[]>();
  const timedRate = async (path: string, count: number, work: () => Promise<readonly string[]>) => {
    const stopCpu = startCpuMeasurement(cpuGroups);
    const start = process.hrtime.bigint();
    const ids = await work();
    const written = Number(process.hrtime.bigint() - start) / 1e9;
    await arrival(ids);
    cpu.set(path, [...(cpu.get(path) ?? []), { usage: stopCpu(), count }]);
    writeRates.set(path, [...(writeRates.get(path) ?? []), count / written]);
    return count / (Number(process.hrtime.bigint() - start) / 1e9);
  };

  const rawSample = (count: number) =>
    timedRate('raw', count, async () => {
      const envelopes: Envelope[] = Array.from({ length: count }, () => {
        const payload = nextPayload();
        return {
          messageId: randomUUID(),
          eventType: event.eventType,
          schemaVersion: 1,
          aggregateType: 'Stock',
          aggregateId: payload.sku,
          occurredAt: new Date().toISOString(),
          payload,
        };
      });
      for (let i = 0; i < count; i += BATCH) {
        await producer.send(
          envelopes.slice(i, i + BATCH).map((e) => envelopeToKafkaRecord(e, options.rawTopic)),
        );
      }
      return envelopes.map((e) => e.messageId);
    });

  /**
   * Writes `count` events into `db` in transactions of `size`, one starting every `intervalMs`
   * (0: back to back); returns their ids and commit times.
   */
  const write = async (
    db: Database,
    count: number,
    size: number,
    writeOptions: OutboxWriteOptions,
    intervalMs = 0,
    batched = false,
  ): Promise<Map<string, number>> => {
    const committed = new Map<string, number>();
    const began = Date.now();
    for (let start = 0; start < count; start += size) {
      const due = began + (start / size) * intervalMs - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      const n = Math.min(count, start + size) - start;
      const ids = await db.transaction(async (tx) => {
        if (batched) {
          const envelopes = await writeCdcOutboxEvents(
            tx,
            Array.from({ length: n }, () => ({ descriptor: event, payload: nextPayload() })),
            writeOptions,
          );
          return envelopes.map((e) => e.messageId);
        }
        const batch: string[] = [];
        for (let i = 0; i < n; i++) {
          const envelope = await writeOutboxEvent(tx, event, nextPayload(), {}, writeOptions);
          batch.push(envelope.messageId);
        }
        return batch;
      });
      const now = Date.now();
      for (const id of ids) committed.set(id, now);
    }
    return committed;
  };

  const writeSample =
    (path: string, db: Database, writeOptions: OutboxWriteOptions, batched = false) =>
    (count: number) =>
      timedRate(path, count, async () => [
        ...(await write(db, count, BATCH, writeOptions, 0, batched)).keys(),
      ]);

  const warmUpWorker = async (path: string, sample: (count: number) => Promise<number>) => {
    const connectCpuPerEvent = () => {
      const last = cpu.get(path)?.at(-1);
      return last === undefined ? NaN : (last.usage.groups.connect ?? 0) / last.count;
    };
    let samples = 0;
    for (let settled = 0, previous = NaN; samples < MAX_WARM_UP_SAMPLES;) {
      await sample(MESSAGES);
      samples++;
      const current = connectCpuPerEvent();
      settled = Math.abs(current - previous) <= 0.1 * previous ? settled + 1 : 0;
      previous = current;
      if (settled >= 1 && samples >= MIN_WARM_UP_SAMPLES) break;
    }
    return samples;
  };

  const alternate = async (
    paths: readonly [number[], (count: number) => Promise<number>, number][],
  ) => {
    for (let round = 0; round < SAMPLES; round++) {
      for (const [rates, sample, count] of round % 2 === 0 ? paths : [...paths].reverse()) {
        rates.push(await sample(count));
      }
    }
  };

  const latencies = async (db: Database, writeOptions: OutboxWriteOptions, batched = false) => {
    const committed = await write(
      db,
      PACED_TRANSACTIONS * 10,
      10,
      writeOptions,
      (10 * 1_000) / LATENCY_RATE,
      batched,
    );
    await arrival([...committed.keys()]);
    return [...committed].map(([id, at]) => received.get(id)! - at);
  };

  const writing = (path: string, skip = 1) =>
    median((writeRates.get(path) ?? []).slice(skip)).toFixed(0);

  const cpuPer1000 = (path: string, skip = 1) => {
    const samples = (cpu.get(path) ?? []).slice(skip);
    const per = (f: (u: CpuUsage) => number) =>
      median(samples.map(({ usage, count }) => (f(usage) / count) * 1000)).toFixed(0);
    const groups = cpuGroups.map(({ name }) => `${name} ${per((u) => u.groups[name] ?? 0)}`);
    const sum = (u: CpuUsage) => Object.values(u.groups).reduce((total, ms) => total + ms, 0);
    const load = median(samples.map(({ usage }) => usage.machineBusyMs / usage.machineCapacityMs));
    return `${path}: ${groups.join(', ')} (together ${per(sum)}), other processes ${per((u) => u.machineBusyMs - sum(u))}; machine ${(load * 100).toFixed(0)}% busy`;
  };

  return {
    timedRate,
    rawSample,
    writeSample,
    warmUpWorker,
    alternate,
    latencies,
    writing,
    cpuPer1000,
    async close() {
      for (const consumer of consumers) await consumer.close().catch(() => undefined);
    },
  };
}

/** Per round, subject / raw of the same round: the load changes less within a round. */
export function pairedRatios(rates: readonly number[], rawRates: readonly number[]): string {
  const ratios = rates.map((rate, i) => rate / rawRates[i]!);
  return `per-round ratios to raw ${ratios.map((r) => r.toFixed(2)).join(' / ')} (median ${median(ratios).toFixed(2)})`;
}

function describeLatency(values: readonly number[]): string {
  return `p50 ${median(values).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms`;
}

/** A CDC source with the shared broker, its topics, the consumers and a polling relay beside it. */
export interface CdcBench<S extends CdcSource> {
  readonly source: S;
  readonly h: CdcBenchHarness;
  readonly event: StockCountedDescriptor;
  /** The topic the CDC writer routes to (`cdc`, with the test prefix). */
  readonly cdcTopic: string;
  /** The CDC writer's options (topic prefix of the test broker). */
  readonly cdcWrite: OutboxWriteOptions;
  /** evgen's polling relay on the same database (not started), publishing to `relay`. */
  readonly relay: OutboxRelay;
  /**
   * The commit → consumer latency row: p99 of the CDC batch writer's events vs the polling
   * relay's (started for its part only), PACED_TRANSACTIONS transactions of 10 each.
   */
  latencyVsRelay(name: string, baselineName: string): Promise<BenchResult>;
  /** Stops everything and removes the topics, the connector, the worker and the server. */
  close(): Promise<void>;
}

/**
 * Starts a CDC source (`start`: startCdcPostgres or startCdcMariadb) with the worker on
 * WORKER_JVM_FLAGS, its connector, topics `cdc`, `relay` and `raw` (6 partitions), the polling
 * outbox, a consumer per topic and the relay. `databaseGroup` names the database's processes
 * for the CPU accounting.
 */
export async function openCdcBench<S extends CdcSource>(
  start: (options: CdcSourceOptions) => Promise<S>,
  databaseGroup: (source: S) => Promise<ProcessGroup>,
): Promise<CdcBench<S>> {
  await ensureSharedKafkaBroker();
  const kafka = await createTestKafka(kafkajsClient);
  const closers: (() => Promise<void>)[] = [() => kafka.cleanup()];
  const close = async () => {
    for (const step of closers.reverse()) await step().catch(() => undefined);
  };
  try {
    const source = await start({ worker: { jvmFlags: WORKER_JVM_FLAGS } });
    closers.push(() => source.destroy());
    const client = kafkajsClient({ brokers: [kafka.brokers] });
    const producer = await client.producer();
    closers.push(() => producer.close());
    await source.startConnector();
    await migrateOutbox(source.db);
    const [cdcTopic, relayTopic, rawTopic] = await kafka.createTopics([
      { topic: 'cdc', partitions: 6 },
      { topic: 'relay', partitions: 6 },
      { topic: 'raw', partitions: 6 },
    ]);
    const event = stockCountedEvent('cdc');
    const h = await cdcBenchHarness({
      kafka,
      client,
      producer,
      topics: [cdcTopic!, relayTopic!, rawTopic!],
      rawTopic: rawTopic!,
      event,
      cpuGroups: cdcCpuGroups(await databaseGroup(source), () => source.worker.pid()),
    });
    closers.push(() => h.close());
    const relay = createOutboxRelay({
      db: source.db,
      publisher: kafkaRelayPublisher(
        producer,
        { [event.eventType]: { topic: 'relay' } },
        { prefix: kafka.prefix },
      ),
    });
    closers.push(() => relay.stop());
    const cdcWrite: OutboxWriteOptions = { mode: 'cdc', topicPrefix: kafka.prefix };
    const latencyVsRelay = async (name: string, baselineName: string): Promise<BenchResult> => {
      const cdcLatency = await h.latencies(source.db, cdcWrite, true);
      await relay.start();
      let relayLatency: number[];
      try {
        relayLatency = await h.latencies(source.db, {});
      } finally {
        await relay.stop();
      }
      return {
        name,
        unit: 'ms',
        subject: percentile(cdcLatency, 99),
        baselineName,
        baseline: percentile(relayLatency, 99),
        note: `${LATENCY_PACE}; CDC ${describeLatency(cdcLatency)}; relay ${describeLatency(relayLatency)}`,
      };
    };
    return {
      source,
      h,
      event,
      cdcTopic: cdcTopic!,
      cdcWrite,
      relay,
      latencyVsRelay,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
