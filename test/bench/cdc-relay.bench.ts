/**
 * Insert → topic through Debezium (the CDC outbox on Kafka Connect) vs the polling relay vs a raw
 * producer, the same records in one run: a private logical-decoding PostgreSQL holds both outboxes,
 * a Kafka Connect 4.4.0 worker runs the generated connector, and kafkajs is the relay's producer,
 * the raw producer and the consumer that sees the records arrive.
 *
 * - Throughput (medians of ≥ 3 alternating samples): events written in transactions of 100 (CDC
 *   and relay: the relay runs meanwhile) until the consumer has seen every one, vs the raw
 *   idempotent producer sending the same records in awaited sends of 100 (no database) until the
 *   consumer has seen them. Goal: CDC ≥ 0.9× raw. CDC is measured twice: the batch writer
 *   (writeCdcOutboxEvents: one INSERT … unnest of column arrays per transaction) and one writeOutboxEvent per
 *   event (a round trip each, as the relay's writer). Every path is warmed up first (1,000
 *   events), the rounds alternate their order, and the notes give each round's ratio to the raw
 *   sample of the same round besides the ratio of the medians.
 * - Debezium's own capacity: the same rows inserted server-side, 100 per statement (no
 *   per-event round trips from Node), streamed the same way.
 * - Latency: transactions of 10 events every 50 ms; per event, the time from its transaction's
 *   commit to the consumer receiving it; p50 and p99 (CDC vs relay; a raw producer has no commit).
 * - Where the CPU goes (process-cpu.ts): per throughput sample, CPU ms per 1,000 events of this
 *   Node process (writer or producer, and the consumers), the private PostgreSQL, the Connect
 *   worker, the shared broker, and everything else on the machine, with the machine's load: on
 *   2 shared cores the ratio is bound by CPU, and this says whose.
 */
import { randomUUID } from 'node:crypto';
import {
  createOutboxRelay,
  kafkaRelayPublisher,
  migrateOutbox,
  writeCdcOutboxEvents,
  writeOutboxEvent,
  type Envelope,
  type EventVersionDescriptor,
  type OutboxWriteOptions,
} from '../../src/runtime/index.js';
import { type KafkaInboundRecord } from '../../src/runtime/kafka/kafka-client.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { kafkajsClient } from '../../src/runtime/kafkajs.js';
import { ensureSharedKafkaBroker } from '../support/kafka/broker.js';
import { createTestKafka } from '../support/kafka/test-kafka.js';
import { startCdcPostgres } from '../cdc/support/cdc-postgres.js';
import { SAMPLES, SMOKE, fromSamples, median, type BenchResult } from './bench-result.js';
import { parentPid, startCpuMeasurement, type CpuUsage } from './process-cpu.js';

/**
 * Events per sample of the raw producer, the batch writer and the server-side inserts: at
 * 3,000–8,000 events/s a sample of 5,000 lasted about a second, so one burst of other work on
 * the shared machine decided it (the same path measured 1,300–6,700 events/s within a minute).
 */
const MESSAGES = SMOKE ? 200 : 20_000;
/** The per-event writer and the polling relay (~600–900 events/s) keep 5,000 per sample. */
const SLOW_MESSAGES = SMOKE ? 200 : 5_000;
const AGGREGATES = 200;
const BATCH = 100;
const PACED_TRANSACTIONS = SMOKE ? 10 : 100;
/**
 * The Connect worker's JVM flags in the bench: the default tiered JIT with a fixed heap.
 * SerialGC, as the JVM itself picks on small machines: on 2 shared cores a concurrent
 * collector's threads would compete with every other process of the pipeline.
 */
const WORKER_JVM_FLAGS = [
  '-Xms512m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:+ExitOnOutOfMemoryError',
];
/** The JIT warm-up: server-side samples, at least the first and at most the second number. */
const MIN_WARM_UP_SAMPLES = SMOKE ? 1 : 8;
const MAX_WARM_UP_SAMPLES = SMOKE ? 1 : 15;

interface StockCounted {
  sku: string;
  quantity: number;
}

function descriptor(topic: string): EventVersionDescriptor<'bench.StockCounted', 1, StockCounted> {
  return {
    eventType: 'bench.StockCounted',
    schemaVersion: 1,
    aggregateType: 'Stock',
    aggregateIdProperty: 'sku',
    validatePayload: (payload) => ({ ok: true, value: payload as StockCounted }),
    readPayload: (payload) => ({ ok: true, value: payload as StockCounted }),
    kafka: { topic },
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export async function run(): Promise<BenchResult[]> {
  await ensureSharedKafkaBroker();
  const kafka = await createTestKafka(kafkajsClient);
  // The worker runs as an operator runs it: the JVM's full tiered JIT (C2), not the tests'
  // start-up flags (C1 only), and it is measured once the JIT has settled (see the warm-up
  // below). With C1 alone, or with C2 still compiling, Connect spends 2–3× the CPU per event
  // it spends in steady state (measured here: 97–145 vs 46–52 ms per 1,000 events).
  const cdc = await startCdcPostgres({ worker: { jvmFlags: WORKER_JVM_FLAGS } });
  const client = kafkajsClient({ brokers: [kafka.brokers] });
  const producer = await client.producer();
  const closers: (() => Promise<void>)[] = [];
  try {
    await cdc.startConnector();
    await migrateOutbox(cdc.db);
    const [cdcTopic, relayTopic, rawTopic] = await kafka.createTopics([
      { topic: 'cdc', partitions: 6 },
      { topic: 'relay', partitions: 6 },
      { topic: 'raw', partitions: 6 },
    ]);
    const event = descriptor('cdc');
    const { rows: backend } = await cdc.pool.query<{ pid: number }>(
      'SELECT pg_backend_pid() AS pid',
    );
    const postmaster = parentPid(backend[0]!.pid);
    const cpuGroups = [
      { name: 'node', matches: (pid: number) => pid === process.pid },
      {
        name: 'postgres',
        matches: (pid: number, ppid: number) => pid === postmaster || ppid === postmaster,
      },
      { name: 'connect', matches: (pid: number) => pid === cdc.worker.pid() },
      {
        name: 'broker',
        matches: (_pid: number, _ppid: number, cmdline: string) =>
          cmdline.includes('kafka.Kafka') && cmdline.includes('evgen-kafka-shared'),
      },
    ];
    /** CPU use per path and sample (see process-cpu.ts). */
    const cpu = new Map<string, { usage: CpuUsage; count: number }[]>();
    const cdcWrite: OutboxWriteOptions = { mode: 'cdc', topicPrefix: kafka.prefix };
    const relayWrite: OutboxWriteOptions = {};

    // messageId → receive time, per topic; a sample waits until all of its ids arrived.
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
    for (const topic of [cdcTopic!, relayTopic!, rawTopic!]) {
      const consumer = client.consumer({ groupId: kafka.group(`bench-${topic}`), topics: [topic] });
      closers.push(() => consumer.close());
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
    /**
     * Writes `count` events in transactions of `size` (`batched`: one writeCdcOutboxEvents call
     * per transaction); returns their ids and commit times.
     */
    const write = async (
      count: number,
      size: number,
      options: OutboxWriteOptions,
      pauseMs = 0,
      batched = false,
    ): Promise<Map<string, number>> => {
      const committed = new Map<string, number>();
      for (let start = 0; start < count; start += size) {
        const n = Math.min(count, start + size) - start;
        const ids = await cdc.db.transaction(async (tx) => {
          if (batched) {
            const envelopes = await writeCdcOutboxEvents(
              tx,
              Array.from({ length: n }, () => ({ descriptor: event, payload: nextPayload() })),
              options,
            );
            return envelopes.map((e) => e.messageId);
          }
          const batch: string[] = [];
          for (let i = 0; i < n; i++) {
            const envelope = await writeOutboxEvent(tx, event, nextPayload(), {}, options);
            batch.push(envelope.messageId);
          }
          return batch;
        });
        const now = Date.now();
        for (const id of ids) committed.set(id, now);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
      return committed;
    };
    const relay = createOutboxRelay({
      db: cdc.db,
      publisher: kafkaRelayPublisher(
        producer,
        { [event.eventType]: { topic: 'relay' } },
        { prefix: kafka.prefix },
      ),
    });
    closers.push(() => relay.stop());

    /** Events/s of the writes alone (before the last one arrived), per path. */
    const writeRates = new Map<string, number[]>();
    const timedRate = async (
      path: string,
      count: number,
      work: () => Promise<readonly string[]>,
    ) => {
      const stopCpu = startCpuMeasurement(cpuGroups);
      const start = process.hrtime.bigint();
      const ids = await work();
      const written = Number(process.hrtime.bigint() - start) / 1e9;
      await arrival(ids);
      cpu.set(path, [...(cpu.get(path) ?? []), { usage: stopCpu(), count }]);
      writeRates.set(path, [...(writeRates.get(path) ?? []), count / written]);
      return count / (Number(process.hrtime.bigint() - start) / 1e9);
    };
    /** CDC rows made by the database itself, 100 per INSERT … SELECT (the trigger deletes them). */
    const cdcBulkSample = (count: number) =>
      timedRate('cdc-bulk', count, async () => {
        const ids: string[] = [];
        for (let start = 0; start < count; start += BATCH) {
          const first = counter;
          counter += Math.min(BATCH, count - start);
          ids.push(
            ...(await cdc.db.transaction(async (tx) => {
              const inserted = await tx.query<{ id: string }>(
                `WITH rows AS (
                   SELECT gen_random_uuid()::text AS id, 'SKU-' || (n % ${AGGREGATES}) AS sku, n,
                          to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
                     FROM generate_series($1::int, $2::int) AS n)
                 INSERT INTO outbox_cdc_event (id, topic, record_key, envelope, event_type,
                   schema_version, aggregate_type, occurred_at, content_type, ce_specversion,
                   ce_source)
                 SELECT id, $3, sku,
                        json_build_object('messageId', id, 'eventType', $4::text, 'schemaVersion', 1,
                          'aggregateType', 'Stock', 'aggregateId', sku, 'occurredAt', at,
                          'payload', json_build_object('sku', sku, 'quantity', n))::text,
                        $4, '1', 'Stock', at, 'application/json', '1.0', '/evgen/Stock'
                   FROM rows RETURNING id`,
                [first, counter - 1, cdcTopic, event.eventType],
              );
              // The table's trigger deleted them again within this transaction.
              return inserted.rows.map((row) => row.id);
            })),
          );
        }
        return ids;
      });
    const cdcSample = (count: number) =>
      timedRate('cdc', count, async () => [
        ...(await write(count, BATCH, cdcWrite, 0, true)).keys(),
      ]);
    const cdcPerEventSample = (count: number) =>
      timedRate('cdc-per-event', count, async () => [
        ...(await write(count, BATCH, cdcWrite)).keys(),
      ]);
    const relaySample = async (count: number) => {
      await relay.start();
      try {
        return await timedRate('relay', count, async () => [
          ...(await write(count, BATCH, relayWrite)).keys(),
        ]);
      } finally {
        await relay.stop();
      }
    };
    const rawSample = (count: number) =>
      timedRate('raw', count, async () => {
        const envelopes: Envelope[] = Array.from({ length: count }, () => {
          const n = counter++;
          return {
            messageId: randomUUID(),
            eventType: event.eventType,
            schemaVersion: 1,
            aggregateType: 'Stock',
            aggregateId: `SKU-${n % AGGREGATES}`,
            occurredAt: new Date().toISOString(),
            payload: { sku: `SKU-${n % AGGREGATES}`, quantity: n },
          };
        });
        for (let i = 0; i < count; i += BATCH) {
          await producer.send(
            envelopes.slice(i, i + BATCH).map((e) => envelopeToKafkaRecord(e, rawTopic!)),
          );
        }
        return envelopes.map((e) => e.messageId);
      });

    // Warm-up. The Connect worker's JIT first: server-side samples until the worker's CPU per
    // event settles (two samples in a row within 10% of each other, after at least
    // MIN_WARM_UP_SAMPLES: C2 compiles in bursts, and CPU per event measured at a plateau of
    // 140–160 ms per 1,000 events 100,000 events in before falling to 46–55), since a worker
    // compiled by C1 alone or still compiling with C2 costs 2–3× its steady-state CPU and a
    // long-running worker lives in that steady state. Then every path once (connections,
    // V8's JIT, the connector's first batches).
    const connectCpuPerEvent = () => {
      const last = cpu.get('cdc-bulk')?.at(-1);
      return last === undefined ? NaN : (last.usage.groups.connect ?? 0) / last.count;
    };
    let warmUpEvents = 0;
    for (let settled = 0, previous = NaN; warmUpEvents < MAX_WARM_UP_SAMPLES * MESSAGES;) {
      await cdcBulkSample(MESSAGES);
      warmUpEvents += MESSAGES;
      const current = connectCpuPerEvent();
      settled = Math.abs(current - previous) <= 0.1 * previous ? settled + 1 : 0;
      previous = current;
      if (settled >= 1 && warmUpEvents >= MIN_WARM_UP_SAMPLES * MESSAGES) break;
    }
    const warmUpSamples = cpu.get('cdc-bulk')!.length;
    const WARM_UP = Math.min(MESSAGES, 1_000);
    await cdcSample(WARM_UP);
    await cdcPerEventSample(Math.min(MESSAGES, 200));
    await relaySample(Math.min(MESSAGES, 200));
    await rawSample(WARM_UP);
    const cdcRates: number[] = [];
    const cdcPerEventRates: number[] = [];
    const cdcBulkRates: number[] = [];
    const relayRates: number[] = [];
    const rawRates: number[] = [];
    const rounds: [number[], (count: number) => Promise<number>, number][] = [
      [rawRates, rawSample, MESSAGES],
      [cdcRates, cdcSample, MESSAGES],
      [cdcBulkRates, cdcBulkSample, MESSAGES],
      [cdcPerEventRates, cdcPerEventSample, SLOW_MESSAGES],
      [relayRates, relaySample, SLOW_MESSAGES],
    ];
    for (let sample = 0; sample < SAMPLES; sample++) {
      // Every other round in reverse order, so no path always runs right after another: on a
      // shared machine the load drifts within a round, and a fixed order would bias one side.
      for (const [rates, measure, count] of sample % 2 === 0 ? rounds : [...rounds].reverse()) {
        rates.push(await measure(count));
      }
    }
    /** Per round, subject / raw of the same round: the load changes less within a round. */
    const paired = (rates: readonly number[]) => {
      const ratios = rates.map((rate, i) => rate / rawRates[i]!);
      return `per-round ratios to raw ${ratios.map((r) => r.toFixed(2)).join(' / ')} (median ${median(ratios).toFixed(2)})`;
    };

    const latencies = async (options: OutboxWriteOptions, batched = false) => {
      const committed = await write(PACED_TRANSACTIONS * 10, 10, options, 50, batched);
      await arrival([...committed.keys()]);
      return [...committed].map(([id, at]) => received.get(id)! - at);
    };
    const cdcLatency = await latencies(cdcWrite, true);
    await relay.start();
    const relayLatency = await latencies(relayWrite);
    await relay.stop();
    const describe = (values: readonly number[]) =>
      `p50 ${median(values).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms`;

    // The first entries of every path are its warm-up (the server-side path's: the JIT's).
    const measured = <T>(path: string, entries: readonly T[]) =>
      entries.slice(path === 'cdc-bulk' ? warmUpSamples : 1);
    const writing = (path: string) => median(measured(path, writeRates.get(path) ?? [])).toFixed(0);
    /** CPU ms per 1,000 events by process group (medians of the samples) and machine load. */
    const cpuPer1000 = (path: string) => {
      const samples = measured(path, cpu.get(path) ?? []);
      const per = (f: (u: CpuUsage) => number) =>
        median(samples.map(({ usage, count }) => (f(usage) / count) * 1000)).toFixed(0);
      const groups = cpuGroups
        .map(({ name }) => `${name} ${per((u) => u.groups[name] ?? 0)}`)
        .join(', ');
      const others = per(
        (u) => u.machineBusyMs - Object.values(u.groups).reduce((sum, ms) => sum + ms, 0),
      );
      const load = median(
        samples.map(({ usage }) => usage.machineBusyMs / usage.machineCapacityMs),
      );
      const ours = per((u) => Object.values(u.groups).reduce((sum, ms) => sum + ms, 0));
      return `${path}: ${groups} (together ${ours}), other processes ${others}; machine ${(load * 100).toFixed(0)}% busy`;
    };
    const cpuNote = `CPU ms per 1,000 events — ${['raw', 'cdc', 'cdc-bulk'].map(cpuPer1000).join(' | ')}`;
    const note = `the Connect worker with the full JIT, measured after a warm-up of ${warmUpSamples * MESSAGES} events until its CPU per event settled; ${MESSAGES} events per sample (per-event writer and relay ${SLOW_MESSAGES}) in transactions of ${BATCH}, ${AGGREGATES} aggregates, 6 partitions; insert start → all seen by a kafkajs consumer; the writes alone: CDC batch writer ${writing('cdc')}, CDC per event ${writing('cdc-per-event')}, relay ${writing('relay')}, raw sends ${writing('raw')} events/s; ${cpuNote}`;
    return [
      fromSamples(
        {
          name: 'CDC (Debezium on Kafka Connect) insert → topic, batch writer (one INSERT of column arrays per transaction)',
          unit: 'events/s',
          baselineName: 'raw kafkajs idempotent producer (acks=all), sends of 100 awaited',
          goal: { ratio: 0.9, better: 'higher' },
          note: `${paired(cdcRates)}; ${note}`,
        },
        cdcRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'CDC insert → topic, one writeOutboxEvent per event',
          unit: 'events/s',
          baselineName: 'raw kafkajs idempotent producer (acks=all), sends of 100 awaited',
          note,
        },
        cdcPerEventRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'CDC streaming alone: rows inserted server-side (100 per INSERT … SELECT) → topic',
          unit: 'events/s',
          baselineName: 'raw kafkajs idempotent producer (acks=all), sends of 100 awaited',
          goal: { ratio: 0.9, better: 'higher' },
          note: `${paired(cdcBulkRates)}; ${MESSAGES} events per sample; Debezium + Connect without evgen's per-event writes (inserts alone ${writing('cdc-bulk')} events/s)`,
        },
        cdcBulkRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'polling relay (kafkajs) insert → topic',
          unit: 'events/s',
          baselineName: 'raw kafkajs idempotent producer (acks=all), sends of 100 awaited',
          note,
        },
        relayRates,
        rawRates,
      ),
      {
        name: 'CDC commit → consumer latency p99',
        unit: 'ms',
        subject: percentile(cdcLatency, 99),
        baselineName: 'polling relay (defaults, woken by NOTIFY) p99',
        baseline: percentile(relayLatency, 99),
        note: `${PACED_TRANSACTIONS} transactions of 10 events every 50 ms; CDC ${describe(cdcLatency)}; relay ${describe(relayLatency)}`,
      },
    ];
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await producer.close();
    await kafka.cleanup().catch(() => undefined);
    await cdc.destroy();
  }
}
