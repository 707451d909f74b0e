/**
 * The CDC relay from MariaDB: insert → topic through Debezium's MariaDB connector (binlog) vs
 * the raw producer, the same records in one run, as cdc-relay.bench.ts measures it from
 * PostgreSQL. A private mariadbd with a row binlog holds the CDC outbox and evgen's polling
 * outbox; a Kafka Connect 4.4.0 worker runs the generated connector.
 *
 * - Throughput: evgen's batch writer (writeCdcOutboxEvents: one multi-row INSERT and one DELETE
 *   of the same ids per transaction of 100, since a MariaDB trigger may not delete from its own
 *   table) until a kafkajs consumer has seen every event, vs the raw idempotent producer sending
 *   the same records in awaited sends of 100. Goal: CDC ≥ 0.9× raw. The worker's JIT is warmed
 *   up on the batch writer's samples until its CPU per event settles.
 * - Latency: commit → consumer, p50 and p99, CDC vs the polling relay on the same server.
 */
import { startCdcMariadb } from '../cdc/support/cdc-mariadb.js';
import { fromSamples, type BenchResult } from './bench-result.js';
import {
  AGGREGATES,
  BATCH,
  MESSAGES,
  openCdcBench,
  RAW_BASELINE,
  pairedRatios,
} from './cdc-bench-harness.js';

export async function run(): Promise<BenchResult[]> {
  const bench = await openCdcBench(startCdcMariadb, async (cdc) => ({
    name: 'mariadb',
    matches: (pid) => pid === cdc.server.pid(),
  }));
  try {
    const { source: cdc, h, cdcWrite } = bench;
    const cdcSample = h.writeSample('cdc', cdc.db, cdcWrite, true);
    // The worker's JIT settles on the batch writer's own samples; then the raw path once.
    const warmUpSamples = await h.warmUpWorker('cdc', cdcSample);
    await h.rawSample(Math.min(MESSAGES, 1_000));
    const cdcRates: number[] = [];
    const rawRates: number[] = [];
    await h.alternate([
      [rawRates, (count) => h.rawSample(count), MESSAGES],
      [cdcRates, cdcSample, MESSAGES],
    ]);

    const cpuNote = `CPU ms per 1,000 events — ${[
      h.cpuPer1000('raw'),
      h.cpuPer1000('cdc', warmUpSamples),
    ].join(' | ')}`;
    return [
      fromSamples(
        {
          name: 'CDC from MariaDB (Debezium MariaDB connector) insert → topic, batch writer (one multi-row INSERT and one DELETE per transaction)',
          unit: 'events/s',
          baselineName: RAW_BASELINE,
          goal: { ratio: 0.9, better: 'higher' },
          note: `${pairedRatios(cdcRates, rawRates)}; the Connect worker with the full JIT, measured after a warm-up of ${warmUpSamples * MESSAGES} events until its CPU per event settled; ${MESSAGES} events per sample in transactions of ${BATCH}, ${AGGREGATES} aggregates, 6 partitions; insert start → all seen by a kafkajs consumer; the writes alone: CDC batch writer ${h.writing('cdc', warmUpSamples)}, raw sends ${h.writing('raw')} events/s; ${cpuNote}`,
        },
        cdcRates,
        rawRates,
      ),
      await bench.latencyVsRelay(
        'CDC from MariaDB commit → consumer latency p99',
        'polling relay on MariaDB (defaults) p99',
      ),
    ];
  } finally {
    await bench.close();
  }
}
