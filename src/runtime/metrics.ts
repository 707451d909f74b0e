/**
 * evgen's numbers as OpenTelemetry metrics, through the global meter of `@opentelemetry/api`
 * (an optional peer: without it, registering does nothing). Everything is observed when the
 * service's metric reader collects, from what the runtime already counts, so no hot path pays:
 *
 *   evgen.outbox.rows               gauge, by status (READY, PROCESSING, SENT, DEAD)
 *   evgen.outbox.oldest_unsent_age  gauge, ms since the oldest unsent row was written
 *   evgen.relay.published / .failed / .dead           counters, per relay registered
 *   evgen.consumer.handled / .duplicates / .skipped / .retried / .dead_lettered   counters, by consumer
 *   evgen.consumer.lag              gauge, by consumer, topic and partition (Kafka runners)
 */
import type { Database } from './db/database.js';
import type { OutboxTableOptions } from './outbox/outbox-table.js';

/** What a relay reports (`OutboxRelay.metrics()`). */
export interface RelayCounts {
  readonly published: number;
  readonly failed: number;
  readonly dead: number;
}

/** What a consumer runner reports (`metrics()` of the RabbitMQ and Kafka runners). */
interface ConsumerCounts {
  readonly handled: number;
  readonly duplicates: number;
  /** Deliveries of types the consumer does not subscribe to, settled without a handler. */
  readonly skipped?: number;
  readonly retried: number;
  readonly deadLettered: number;
}

export interface MeteredConsumer {
  /** The consumer's name (its inbox key): the `consumer` attribute. */
  readonly name: string;
  readonly runner: {
    metrics(): ConsumerCounts;
    lag?(): Promise<readonly { topic: string; partition: number; lag: number }[]>;
  };
}

export interface EvgenMetricsOptions {
  /** The outbox's database: backlog gauges are observed from it when given. */
  readonly db?: Database;
  /** Schema and table of the outbox when not the defaults. */
  readonly outbox?: OutboxTableOptions;
  /** Relays whose published, failed and dead counts are observed (more with `addRelay`). */
  readonly relays?: readonly { metrics(): RelayCounts }[];
  /** Consumer runners whose handled, duplicate, retried and dead-lettered counts (and Kafka lag) are observed. */
  readonly consumers?: readonly MeteredConsumer[];
  /** Meter name; default `evgen`. */
  readonly meterName?: string;
}

export interface EvgenMetrics {
  /** Whether `@opentelemetry/api` was found (otherwise nothing is observed). */
  readonly enabled: boolean;
  /** Stops observing. */
  close(): void;
}

export async function registerEvgenMetrics(options: EvgenMetricsOptions): Promise<EvgenMetrics> {
  const api = await import('@opentelemetry/api').catch(() => undefined);
  if (api === undefined) return { enabled: false, close: () => undefined };
  const meter = api.metrics.getMeter(options.meterName ?? 'evgen');
  const rows = meter.createObservableGauge('evgen.outbox.rows', {
    description: 'Outbox rows by status',
  });
  const oldest = meter.createObservableGauge('evgen.outbox.oldest_unsent_age', {
    description: 'Age of the oldest READY or PROCESSING outbox row',
    unit: 'ms',
  });
  const relayCounters = {
    published: meter.createObservableCounter('evgen.relay.published', {
      description: 'Outbox rows published and confirmed',
    }),
    failed: meter.createObservableCounter('evgen.relay.failed', {
      description: 'Failed publish attempts (retried later)',
    }),
    dead: meter.createObservableCounter('evgen.relay.dead', {
      description: 'Outbox rows moved to DEAD',
    }),
  };
  const consumerCounters = {
    handled: meter.createObservableCounter('evgen.consumer.handled', {
      description: 'Messages handled and acknowledged, duplicates included',
    }),
    duplicates: meter.createObservableCounter('evgen.consumer.duplicates', {
      description: 'Messages the inbox had already',
    }),
    skipped: meter.createObservableCounter('evgen.consumer.skipped', {
      description: 'Messages of types the consumer does not subscribe to, acknowledged unhandled',
    }),
    retried: meter.createObservableCounter('evgen.consumer.retried', {
      description: 'Retries scheduled',
    }),
    deadLettered: meter.createObservableCounter('evgen.consumer.dead_lettered', {
      description: 'Messages dead-lettered',
    }),
  };
  const lag = meter.createObservableGauge('evgen.consumer.lag', {
    description: 'Records waiting to be handled, per partition',
  });
  const observables = [
    rows,
    oldest,
    ...Object.values(relayCounters),
    ...Object.values(consumerCounters),
    lag,
  ];
  const callback = async (result: import('@opentelemetry/api').BatchObservableResult) => {
    if (options.db !== undefined) {
      const { outboxStats } = await import('./outbox/outbox-stats.js');
      const stats = await outboxStats(options.db, options.outbox);
      for (const [status, value] of [
        ['READY', stats.ready],
        ['PROCESSING', stats.processing],
        ['SENT', stats.sent],
        ['DEAD', stats.dead],
      ] as const) {
        result.observe(rows, value, { status });
      }
      if (stats.oldestUnsentAgeMs !== null) result.observe(oldest, stats.oldestUnsentAgeMs);
    }
    const relays = options.relays ?? [];
    const sum = (key: keyof RelayCounts) =>
      relays.reduce((total, relay) => total + relay.metrics()[key], 0);
    if (relays.length > 0) {
      result.observe(relayCounters.published, sum('published'));
      result.observe(relayCounters.failed, sum('failed'));
      result.observe(relayCounters.dead, sum('dead'));
    }
    for (const consumer of options.consumers ?? []) {
      const counts = consumer.runner.metrics();
      const attributes = { consumer: consumer.name };
      result.observe(consumerCounters.handled, counts.handled, attributes);
      result.observe(consumerCounters.duplicates, counts.duplicates, attributes);
      result.observe(consumerCounters.skipped, counts.skipped ?? 0, attributes);
      result.observe(consumerCounters.retried, counts.retried, attributes);
      result.observe(consumerCounters.deadLettered, counts.deadLettered, attributes);
      if (consumer.runner.lag !== undefined) {
        for (const partition of await consumer.runner.lag()) {
          result.observe(lag, partition.lag, {
            consumer: consumer.name,
            topic: partition.topic,
            partition: partition.partition,
          });
        }
      }
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  return {
    enabled: true,
    close: () => meter.removeBatchObservableCallback(callback, observables),
  };
}
