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
 *   event (a round trip each, as the relay's writer). The Connect worker runs with the full JIT
 *   and is warmed up until its CPU per event settles (server-side samples, see warmUpWorker),
 *   then every path once (1,000 events); the rounds alternate their order, and the notes give
 *   each round's ratio to the raw sample of the same round besides the ratio of the medians.
 * - Debezium's own capacity: the same rows inserted server-side, 100 per statement (no
 *   per-event round trips from Node), streamed the same way.
 * - Latency: transactions of 10 events at EVGEN_BENCH_LATENCY_RATE events/s (default 200: one
 *   every 50 ms), EVGEN_BENCH_LATENCY_EVENTS of them (default 1 000); per event, the time from
 *   its transaction's commit to the consumer receiving it; p50 and p99 (CDC vs relay; a raw
 *   producer has no commit). EVGEN_BENCH_CDC_LATENCY_ONLY=1 measures only this, after one
 *   untimed pass of it (no throughput samples, no long JIT warm-up of the worker).
 * - Where the CPU goes (process-cpu.ts): per throughput sample, CPU ms per 1,000 events of this
 *   Node process (writer or producer, and the consumers), the private PostgreSQL, the Connect
 *   worker, the shared broker, and everything else on the machine, with the machine's load: on
 *   2 shared cores the ratio is bound by CPU, and this says whose.
 */
import type { OutboxWriteOptions } from '../../src/runtime/index.js';
import { startCdcPostgres } from '../cdc/support/cdc-postgres.js';
import { SMOKE, fromSamples, type BenchResult } from './bench-result.js';
import {
  AGGREGATES,
  BATCH,
  MESSAGES,
  openCdcBench,
  RAW_BASELINE,
  pairedRatios,
} from './cdc-bench-harness.js';
import { parentPid } from './process-cpu.js';

/** The per-event writer and the polling relay (~600–900 events/s) keep 5,000 per sample. */
const SLOW_MESSAGES = SMOKE ? 200 : 5_000;

export async function run(): Promise<BenchResult[]> {
  // The worker runs with the full JIT and is measured once it has settled (see the warm-up).
  const bench = await openCdcBench(startCdcPostgres, async (cdc) => {
    const { rows } = await cdc.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = parentPid(rows[0]!.pid);
    return {
      name: 'postgres',
      matches: (pid, ppid) => pid === postmaster || ppid === postmaster,
    };
  });
  try {
    const { source: cdc, h, event, cdcTopic, cdcWrite, relay } = bench;
    if (process.env.EVGEN_BENCH_CDC_LATENCY_ONLY === '1') {
      await bench.latencyVsRelay('warm-up', 'warm-up');
      return [
        await bench.latencyVsRelay(
          'CDC commit → consumer latency p99 (latency only, worker not JIT-settled)',
          'polling relay (defaults, woken by NOTIFY) p99',
        ),
      ];
    }
    const relayWrite: OutboxWriteOptions = {};
    let bulkCounter = 0;
    /** CDC rows made by the database itself, 100 per INSERT … SELECT (the trigger deletes them). */
    const cdcBulkSample = (count: number) =>
      h.timedRate('cdc-bulk', count, async () => {
        const ids: string[] = [];
        for (let start = 0; start < count; start += BATCH) {
          const first = bulkCounter;
          bulkCounter += Math.min(BATCH, count - start);
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
                [first, bulkCounter - 1, cdcTopic, event.eventType],
              );
              // The table's trigger deleted them again within this transaction.
              return inserted.rows.map((row) => row.id);
            })),
          );
        }
        return ids;
      });
    const cdcSample = h.writeSample('cdc', cdc.db, cdcWrite, true);
    const cdcPerEventSample = h.writeSample('cdc-per-event', cdc.db, cdcWrite);
    const relayWrites = h.writeSample('relay', cdc.db, relayWrite);
    const relaySample = async (count: number) => {
      await relay.start();
      try {
        return await relayWrites(count);
      } finally {
        await relay.stop();
      }
    };
    // Warm-up: the Connect worker's JIT first (server-side samples until its CPU per event
    // settles, see warmUpWorker), then every path once (connections, V8's JIT, the connector's
    // first batches).
    const warmUpSamples = await h.warmUpWorker('cdc-bulk', cdcBulkSample);
    const WARM_UP = Math.min(MESSAGES, 1_000);
    await cdcSample(WARM_UP);
    await cdcPerEventSample(Math.min(MESSAGES, 200));
    await relaySample(Math.min(MESSAGES, 200));
    await h.rawSample(WARM_UP);
    const cdcRates: number[] = [];
    const cdcPerEventRates: number[] = [];
    const cdcBulkRates: number[] = [];
    const relayRates: number[] = [];
    const rawRates: number[] = [];
    const rounds: [number[], (count: number) => Promise<number>, number][] = [
      [rawRates, (count) => h.rawSample(count), MESSAGES],
      [cdcRates, cdcSample, MESSAGES],
      [cdcBulkRates, cdcBulkSample, MESSAGES],
      [cdcPerEventRates, cdcPerEventSample, SLOW_MESSAGES],
      [relayRates, relaySample, SLOW_MESSAGES],
    ];
    await h.alternate(rounds);

    // The first entries of every path are its warm-up (the server-side path's: the JIT's).
    const skip = (path: string) => (path === 'cdc-bulk' ? warmUpSamples : 1);
    const writing = (path: string) => h.writing(path, skip(path));
    const cpuPer1000 = (path: string) => h.cpuPer1000(path, skip(path));
    const cpuNote = `CPU ms per 1,000 events — ${['raw', 'cdc', 'cdc-bulk'].map(cpuPer1000).join(' | ')}`;
    const note = `the Connect worker with the full JIT, measured after a warm-up of ${warmUpSamples * MESSAGES} events until its CPU per event settled; ${MESSAGES} events per sample (per-event writer and relay ${SLOW_MESSAGES}) in transactions of ${BATCH}, ${AGGREGATES} aggregates, 6 partitions; insert start → all seen by a kafkajs consumer; the writes alone: CDC batch writer ${writing('cdc')}, CDC per event ${writing('cdc-per-event')}, relay ${writing('relay')}, raw sends ${writing('raw')} events/s; ${cpuNote}`;
    return [
      fromSamples(
        {
          name: 'CDC (Debezium on Kafka Connect) insert → topic, batch writer (one INSERT of column arrays per transaction)',
          unit: 'events/s',
          baselineName: RAW_BASELINE,
          goal: { ratio: 0.9, better: 'higher' },
          note: `${pairedRatios(cdcRates, rawRates)}; ${note}`,
        },
        cdcRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'CDC insert → topic, one writeOutboxEvent per event',
          unit: 'events/s',
          baselineName: RAW_BASELINE,
          note,
        },
        cdcPerEventRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'CDC streaming alone: rows inserted server-side (100 per INSERT … SELECT) → topic',
          unit: 'events/s',
          baselineName: RAW_BASELINE,
          goal: { ratio: 0.9, better: 'higher' },
          note: `${pairedRatios(cdcBulkRates, rawRates)}; ${MESSAGES} events per sample; Debezium + Connect without evgen's per-event writes (inserts alone ${writing('cdc-bulk')} events/s)`,
        },
        cdcBulkRates,
        rawRates,
      ),
      fromSamples(
        {
          name: 'polling relay (kafkajs) insert → topic',
          unit: 'events/s',
          baselineName: RAW_BASELINE,
          note,
        },
        relayRates,
        rawRates,
      ),
      await bench.latencyVsRelay(
        'CDC commit → consumer latency p99',
        'polling relay (defaults, woken by NOTIFY) p99',
      ),
    ];
  } finally {
    await bench.close();
  }
}
