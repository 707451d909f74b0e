/**
 * Relay → Kafka against a raw producer doing the same work, per client adapter, in the same run
 * (real PostgreSQL, the shared test broker), medians of ≥ 3 alternating samples with spread:
 * the outbox relay at its defaults (batch 100, maxInFlight 100), running its loop (`start`), through
 * `kafkaRelayPublisher` (claim, acknowledged send with acks = all on an idempotent producer,
 * mark SENT) vs the same adapter's idempotent producer sending the same kind of records in sends
 * of 100 (the relay's batch), each awaited — no database. Goal: ratio ≥ 0.7.
 * Framed: the same relay with the event marked `wireFormat: 'confluent'` (ids from the real
 * registry, resolved once and cached) vs the same relay writing plain JSON, in the same run.
 * Poller: the same relay vs a minimal hand-written outbox poller over the same table and producer
 * (one transaction per batch of 100: SELECT … FOR UPDATE SKIP LOCKED, an awaited send, UPDATE to
 * SENT, COMMIT), so the ratio separates evgen's own cost from the cost of having an outbox at
 * all. Goal ≥ 0.9. On PostgreSQL and on MariaDB (a row of its own, both ratios).
 * Hot aggregates: the same relay on 10 aggregates (a claim holds chains of ~10 rows each), with
 * `publishChain` (an aggregate's rows in one send) vs the same publisher without it (each row
 * after the previous one's acknowledgement), on both databases.
 * Where the time goes: each path's CPU per 1 000 events per process (this Node process, the
 * database server, the broker JVM; process-cpu.ts) and, for the relay, its sends' sizes and
 * times beside its claim statements' (relay-trace.ts), printed to stderr after the rows; with
 * EVGEN_BENCH_CPU_PROF=DIR each client's raw producer samples and PostgreSQL relay and poller
 * samples are also CPU-profiled there, so their main threads can be compared function by function.
 * EVGEN_BENCH_KAFKA_RELAY_ONLY=mariadb runs only the raw producer and the MariaDB paths (their
 * rows, CPU and a trace of the MariaDB relay's claim statements); EVGEN_BENCH_KAFKA_CLIENTS:
 * adapters to run (comma-separated, default all).
 */
import {
  createSchemaIds,
  kafkaRelayPublisher,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
  type Envelope,
  type KafkaProducer,
  type Publisher,
} from '../../src/runtime/index.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';
import { createTestKafka, KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { TEST_REGISTRY_URL } from '../support/registry/apicurio.js';
import { registerStockCounted } from './registered-stock-counted.js';
import { SAMPLES, SMOKE, fromSamples, median, type BenchResult } from './bench-result.js';
import { profiled } from './cpu-profile.js';
import { startCpuMeasurement, type CpuUsage, type ProcessGroup } from './process-cpu.js';
import {
  describeStatements,
  describeTrace,
  traceMysqlPool,
  traceRelay,
  type TraceTimings,
} from './relay-trace.js';
import { timed } from './bench-timing.js';
import { relayRate } from './relay-rate.js';
import {
  mariadbPollerBatch,
  postgresPollerBatch,
  type PollerBatch,
} from './hand-written-poller.js';
import { stockCountedEvent } from './stock-counted.js';

const MESSAGES = SMOKE ? 200 : 2_000;
const AGGREGATES = 200;
/** Few aggregates with long backlogs: each claim holds chains of several rows per aggregate. */
const HOT_AGGREGATES = 10;
const WINDOW = 100;

const stockCounted = stockCountedEvent();
const MARIADB_ONLY = process.env.EVGEN_BENCH_KAFKA_RELAY_ONLY === 'mariadb';
const CLIENTS = (process.env.EVGEN_BENCH_KAFKA_CLIENTS ?? '').split(',').filter(Boolean);

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const registered = await registerStockCounted();
  try {
    return await runBench(registered.subject);
  } finally {
    await registered.remove();
  }
}

/** Writes `count` rows in transactions of 100 (not timed: both sides start from the same table). */
async function writeRows(db: Database, schema: string, count: number, aggregates = AGGREGATES) {
  for (let start = 0; start < count; start += 100) {
    await db.transaction(async (tx) => {
      for (let i = start; i < Math.min(count, start + 100); i++)
        await writeOutboxEvent(
          tx,
          stockCounted,
          { sku: `SKU-${i % aggregates}`, quantity: i },
          {},
          { schema, notifyChannel: false },
        );
    });
  }
}

/** CPU use per path and sample (see process-cpu.ts), with the events each sample moved. */
type CpuSamples = Map<string, { usage: CpuUsage; count: number }[]>;

/** Runs `work` (moving `count` events) with its CPU use recorded under `path`. */
async function measured<T>(
  cpu: CpuSamples,
  groups: readonly ProcessGroup[],
  path: string,
  count: number,
  work: () => Promise<T>,
): Promise<T> {
  const stop = startCpuMeasurement(groups);
  const result = await work();
  cpu.set(path, [...(cpu.get(path) ?? []), { usage: stop(), count }]);
  return result;
}

/** `path: node N, postgres N, … (together N), other processes N; machine N% busy`, per 1 000 events. */
function cpuPer1000(cpu: CpuSamples, groups: readonly ProcessGroup[], path: string): string {
  const samples = cpu.get(path) ?? [];
  const per = (f: (u: CpuUsage) => number) =>
    median(samples.map(({ usage, count }) => (f(usage) / count) * 1000)).toFixed(0);
  const sum = (u: CpuUsage) => Object.values(u.groups).reduce((total, ms) => total + ms, 0);
  const load = median(samples.map(({ usage }) => usage.machineBusyMs / usage.machineCapacityMs));
  return `${path}: ${groups.map(({ name }) => `${name} ${per((u) => u.groups[name] ?? 0)}`).join(', ')} (together ${per(sum)}), other processes ${per((u) => u.machineBusyMs - sum(u))}; machine ${(load * 100).toFixed(0)}% busy`;
}

/** Events/s of the relay at its defaults, started on `count` written rows until all are published. */
async function relaySample(
  db: Database,
  schema: string,
  count: number,
  publisher: Publisher,
  measure: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
  onIdle?: (waitMs: number) => void,
  aggregates = AGGREGATES,
): Promise<number> {
  await writeRows(db, schema, count, aggregates);
  return measure(() =>
    relayRate({
      db,
      schema,
      publisher,
      count,
      bench: 'kafka relay bench',
      ...(onIdle !== undefined ? { onIdle } : {}),
    }),
  );
}

/** Events/s of the hand-written poller on `count` written rows. */
async function pollerSample(
  db: Database,
  schema: string,
  count: number,
  batch: PollerBatch,
  measure: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
): Promise<number> {
  await writeRows(db, schema, count);
  return measure(
    async () =>
      count /
      (await timed(async () => {
        for (let published = 0; published < count;) {
          const sent = await batch(WINDOW);
          if (sent === 0) throw new Error('kafka relay bench: the poller found no READY row');
          published += sent;
        }
      })),
  );
}

async function runBench(subject: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const { name, create } of KAFKA_CLIENTS) {
    if (CLIENTS.length > 0 && !CLIENTS.includes(name)) continue;
    const pg = await createTestSchema('evgen_bench_kafka');
    const maria = await createMariadbDatabase('evgen_bench_kafka');
    const kafka = await createTestKafka(create);
    const clientProducer: KafkaProducer = await create({ brokers: [kafka.brokers] }).producer();
    try {
      // This run's own backends (other engineers' sessions on the shared server are not counted):
      // every connection the pool has held, by its backend's PID.
      const backends = new Set<number>();
      const poolClients = () =>
        (pg.pool as unknown as { _clients: { processID: number | null }[] })._clients;
      const ourBackend = (pid: number) => {
        for (const client of poolClients())
          if (client.processID !== null) backends.add(client.processID);
        return backends.has(pid);
      };
      const groups: ProcessGroup[] = [
        { name: 'node', matches: (pid) => pid === process.pid },
        { name: 'postgres', matches: (pid) => ourBackend(pid) },
        {
          name: 'mariadb',
          matches: (_pid, _ppid, cmdline) => /(^|\/)(mariadbd|mysqld)\b/.test(cmdline),
        },
        {
          name: 'broker',
          matches: (_pid, _ppid, cmdline) =>
            cmdline.includes('kafka.Kafka') && cmdline.includes('evgen-kafka-shared'),
        },
      ];
      const cpu: CpuSamples = new Map();
      const measure =
        (path: string, count: number) =>
        <T>(work: () => Promise<T>) =>
          measured(cpu, groups, path, count, work);
      // Sends, claims and marks of every path, timed from outside (relay-trace.ts).
      const trace = traceRelay(postgresDatabase(pg.pool), clientProducer);
      const traces = new Map<string, TraceTimings[]>();
      const traced = (path: string) =>
        traces.set(path, [...(traces.get(path) ?? []), trace.take()]);
      const producer = trace.producer;
      const pgDb = trace.db;
      const mariaTrace = traceRelay(
        mysqlDatabase(
          traceMysqlPool(maria.pool, (text, ms, size) => mariaTrace.record(text, ms, size)),
        ),
        clientProducer,
      );
      const mariaDb = mariaTrace.db;
      await migrateOutbox(pgDb, { schema: pg.schema });
      await migrateOutbox(mariaDb, { schema: maria.schema });
      const [relayTopic, rawTopic] = await kafka.createTopics([
        { topic: 'relay', partitions: 6 },
        { topic: 'raw', partitions: 6 },
      ]);

      const schemaIds = createSchemaIds({
        registry: { url: TEST_REGISTRY_URL },
        subjectNameStrategy: () => subject,
      });
      const plain = kafkaRelayPublisher(
        producer,
        { [stockCounted.eventType]: { topic: 'relay' } },
        { prefix: kafka.prefix },
      );
      const framed = kafkaRelayPublisher(
        producer,
        { [stockCounted.eventType]: { topic: 'relay', wireFormat: 'confluent' } },
        { prefix: kafka.prefix, wireFormat: { schemaIds } },
      );
      // The same publisher without publishChain: the relay sends each row of an aggregate only
      // after the previous one's acknowledgement.
      const rowByRow: Publisher = { publish: (message) => plain.publish(message) };
      const hot = (db: Database, schema: string, publisher: Publisher) =>
        relaySample(db, schema, MESSAGES, publisher, undefined, undefined, HOT_AGGREGATES);
      const pgPoller = postgresPollerBatch(pg.pool, pg.schema, producer, relayTopic!);
      const mariaPoller = mariadbPollerBatch(maria.pool, producer, relayTopic!);

      const rawSample = async (count: number): Promise<number> => {
        const records = Array.from({ length: count }, (_, i) => {
          const envelope: Envelope = {
            messageId: crypto.randomUUID(),
            eventType: stockCounted.eventType,
            schemaVersion: 1,
            aggregateType: 'Stock',
            aggregateId: `SKU-${i % AGGREGATES}`,
            occurredAt: new Date().toISOString(),
            payload: { sku: `SKU-${i % AGGREGATES}`, quantity: i },
          };
          return envelopeToKafkaRecord(envelope, rawTopic!);
        });
        return measure(
          'raw',
          count,
        )(
          async () =>
            count /
            (await timed(async () => {
              for (let i = 0; i < count; i += WINDOW)
                await producer.send(records.slice(i, i + WINDOW));
            })),
        );
      };

      // Warm-up: connections, query plans, JIT, the registry id.
      const warm = Math.min(MESSAGES, 200);
      if (!MARIADB_ONLY) {
        await relaySample(pgDb, pg.schema, warm, plain);
        await relaySample(pgDb, pg.schema, warm, framed);
        await pollerSample(pgDb, pg.schema, warm, pgPoller);
      }
      await relaySample(mariaDb, maria.schema, warm, plain);
      await pollerSample(mariaDb, maria.schema, warm, mariaPoller);
      await rawSample(warm);
      const rates = {
        raw: [] as number[],
        relay: [] as number[],
        framed: [] as number[],
        poller: [] as number[],
        mariaRelay: [] as number[],
        mariaPoller: [] as number[],
        hotChains: [] as number[],
        hotRowByRow: [] as number[],
        mariaHotChains: [] as number[],
        mariaHotRowByRow: [] as number[],
      };
      // Alternating, so a slower phase of the machine touches every side alike.
      trace.take();
      mariaTrace.take();
      const mariaTraces: TraceTimings[] = [];
      const mariaIdle: number[] = [];
      for (let sample = 0; sample < SAMPLES; sample++) {
        rates.raw.push(await profiled(`raw-${name}-${sample}`, () => rawSample(MESSAGES)));
        traced('raw');
        if (!MARIADB_ONLY) {
          rates.relay.push(
            await relaySample(pgDb, pg.schema, MESSAGES, plain, (work) =>
              measure('relay', MESSAGES)(() => profiled(`relay-${name}-postgres-${sample}`, work)),
            ),
          );
          traced('relay');
          rates.poller.push(
            await pollerSample(pgDb, pg.schema, MESSAGES, pgPoller, (work) =>
              measure(
                'poller',
                MESSAGES,
              )(() => profiled(`poller-${name}-postgres-${sample}`, work)),
            ),
          );
          traced('poller');
          rates.framed.push(await relaySample(pgDb, pg.schema, MESSAGES, framed));
        }
        rates.mariaRelay.push(
          await relaySample(
            mariaDb,
            maria.schema,
            MESSAGES,
            plain,
            // The trace from here on: the relay's statements, not the rows' writes.
            (work) => {
              mariaTrace.take();
              return measure('MariaDB relay', MESSAGES)(work);
            },
            (waitMs) => mariaIdle.push(waitMs),
          ),
        );
        trace.take();
        mariaTraces.push(mariaTrace.take());
        rates.mariaPoller.push(
          await pollerSample(
            mariaDb,
            maria.schema,
            MESSAGES,
            mariaPoller,
            measure('MariaDB poller', MESSAGES),
          ),
        );
        trace.take();
        mariaTrace.take();
        if (!MARIADB_ONLY) {
          rates.hotChains.push(await hot(pgDb, pg.schema, plain));
          rates.hotRowByRow.push(await hot(pgDb, pg.schema, rowByRow));
        }
        rates.mariaHotChains.push(await hot(mariaDb, maria.schema, plain));
        rates.mariaHotRowByRow.push(await hot(mariaDb, maria.schema, rowByRow));
        trace.take();
        mariaTrace.take();
      }
      console.error(`kafka-relay (${name}) CPU ms per 1,000 events, medians of ${SAMPLES}:`);
      for (const path of ['raw', 'poller', 'relay', 'MariaDB poller', 'MariaDB relay'])
        if (cpu.has(path)) console.error(`  ${cpuPer1000(cpu, groups, path)}`);
      if (!MARIADB_ONLY) {
        console.error(`kafka-relay (${name}) from outside, PostgreSQL, all samples:`);
        for (const path of ['raw', 'poller', 'relay'])
          console.error(`  ${path}: ${describeTrace(traces.get(path) ?? [])}`);
      }
      console.error(
        `kafka-relay (${name}) MariaDB relay, its statements on pooled connections, all samples:`,
      );
      console.error(`  ${describeStatements(mariaTraces)}`);
      console.error(
        `  idle waits of its lanes: ${mariaIdle.length}, ${mariaIdle.reduce((a, b) => a + b, 0)} ms in all`,
      );
      const note = `${MESSAGES} events per sample, 6 partitions`;
      const rawName = `raw ${name} idempotent producer (acks=all), sends of ${WINDOW} awaited one by one`;
      const pollerName = (database: string) =>
        `minimal hand-written outbox poller on ${database} (SELECT … FOR UPDATE SKIP LOCKED, send, UPDATE SENT), batches of ${WINDOW}`;
      const rows = [
        fromSamples(
          {
            name: `relay → Kafka (${name}), defaults (batch ${WINDOW}, maxInFlight ${WINDOW}), ${AGGREGATES} aggregates`,
            unit: 'events/s',
            baselineName: rawName,
            goal: { ratio: 0.7, better: 'higher' },
            note,
          },
          rates.relay,
          rates.raw,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), PostgreSQL, against a hand-written poller`,
            unit: 'events/s',
            baselineName: pollerName('PostgreSQL'),
            goal: { ratio: 0.9, better: 'higher' },
            note,
          },
          rates.relay,
          rates.poller,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), MariaDB, defaults`,
            unit: 'events/s',
            baselineName: rawName,
            goal: { ratio: 0.7, better: 'higher' },
            note,
          },
          rates.mariaRelay,
          rates.raw,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), MariaDB, against a hand-written poller`,
            unit: 'events/s',
            baselineName: pollerName('MariaDB'),
            goal: { ratio: 0.9, better: 'higher' },
            note,
          },
          rates.mariaRelay,
          rates.mariaPoller,
        ),
        fromSamples(
          {
            name: `relay → Kafka (${name}), Confluent wire format (framed, ids cached)`,
            unit: 'events/s',
            baselineName: 'the same relay writing plain JSON',
            goal: { ratio: 0.9, better: 'higher' },
            note: `${note}, ids from the real registry`,
          },
          rates.framed,
          rates.relay,
        ),
        ...(
          [
            ['PostgreSQL', rates.hotChains, rates.hotRowByRow],
            ['MariaDB', rates.mariaHotChains, rates.mariaHotRowByRow],
          ] as const
        ).map(([database, chains, rowByRowRates]) =>
          fromSamples(
            {
              name: `relay → Kafka (${name}), ${database}, ${HOT_AGGREGATES} aggregates: each aggregate's claimed rows in one send`,
              unit: 'events/s',
              baselineName:
                "the same relay sending an aggregate's next row after the previous one's acknowledgement",
              goal: { ratio: 1, better: 'higher' },
              note,
            },
            chains,
            rowByRowRates,
          ),
        ),
      ];
      // A MariaDB-only run has no PostgreSQL samples: only the MariaDB rows are results.
      results.push(...rows.filter((row) => !MARIADB_ONLY || row.name.includes('MariaDB')));
    } finally {
      await clientProducer.close();
      await kafka.cleanup();
      await maria.drop();
      await pg.drop();
    }
  }
  return results;
}
