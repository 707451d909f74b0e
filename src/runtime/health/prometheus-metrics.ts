/**
 * evgen's numbers in the Prometheus text format, through prom-client: the text format,
 * registries and histograms with no SDK to configure; OpenTelemetry's exporter would need the
 * service to set up a MeterProvider first, and evgen's own OpenTelemetry gauges stay available
 * through `registerEvgenMetrics` for services that have one. prom-client is an optional peer,
 * loaded on first use (load-prom-client.ts).
 *
 * Nothing here knows a transport. Everything comes in through what every runner already has:
 *   - `watchRelay` / `watchConsumer`: at each scrape, the runners' `metrics()` counts, `health()`
 *     facts (ready, breaker, broker, backlog, oldest unsent age, DEAD rows, partitions) and a
 *     Kafka runner's per-partition `lag()`; one snapshot per scrape, however many series read it;
 *   - `instrumentRelay`: the relay's `publisher` and `hooks`, timed per event type;
 *   - `instrumentHandler`: the consumer's `MessageHandler`, timed per event type;
 *   - `consumerEvents`: the runner's `onEvent` hook (rebalances, commit failures, breaker trips);
 *   - `watchPublisher`: a RabbitMQ ConfirmedPublisher's confirm outcomes (returned, nacked, …);
 *   - `watchQueueDepths`: the broker's own counts of a consumer's queues or topics (work, retry,
 *     dead letters), read from the operator's side at each scrape (queue-depth.ts).
 *
 * Labels are runner names (given in code), event types, topics and partitions. Event types come
 * from messages, so they are capped (`maxEventTypes`, default 100; the rest are `other`). No
 * messageId, aggregateId or other per-message value is ever a label: each would be a new series.
 */
import type {
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Registry,
} from 'prom-client';
import type { DeliveryCounts } from '../delivery/delivery-outcome.js';
import type { MessageHandler } from '../delivery/message-handler.js';
import type { RunnerHealth } from '../delivery/runner-health.js';
import type { OutboxRelayHooks } from '../outbox/relay-options.js';
import type { ChainPublishResult, OutboundMessage, Publisher } from '../publisher.js';
import { BoundedLabel } from './bounded-label.js';
import { loadPromClient } from './load-prom-client.js';
import type { MetricsSource } from './health-endpoints.js';
import type { QueueDepth, QueueDepthSource } from './queue-depth.js';

/**
 * A prom-client `Registry` (any prom-client 15 registry is one), described by the members evgen
 * uses so that the runtime's types compile without prom-client installed: it is an optional
 * peer, needed only by services that call `createPrometheusMetrics`.
 */
export interface PrometheusRegistry {
  readonly contentType: string;
  metrics(): Promise<string>;
  getSingleMetric(name: string): unknown;
  removeSingleMetric(name: string): void;
  clear(): void;
}

/** A relay as the metrics read it (`createOutboxRelay(...)`). */
export interface MeteredRelay {
  health(): Promise<RunnerHealth>;
  metrics(): {
    readonly published: number;
    readonly failed: number;
    readonly dead: number;
    readonly unavailable?: number;
  };
}

/** A consumer runner as the metrics read it (RabbitMQ, Kafka, Pulsar, in-process). */
export interface MeteredConsumerRunner {
  health(): Promise<RunnerHealth>;
  /**
   * The shared counts, plus what a transport adds: `redelivered` (RabbitMQ's flag), `fetches` and
   * `lastFetchAt` (a Kafka consumer's polls).
   */
  metrics(): DeliveryCounts & {
    readonly redelivered?: number;
    readonly fetches?: number;
    readonly lastFetchAt?: number;
  };
  /** Kafka: lag per partition; only partitions this member owns are reported. */
  lag?(): Promise<
    readonly {
      readonly topic: string;
      readonly partition: number;
      readonly lag: number;
      readonly assigned?: boolean;
    }[]
  >;
}

/** A RabbitMQ ConfirmedPublisher as the metrics read it (its `stats`). */
export interface MeteredPublisher {
  readonly stats: {
    readonly confirmed: number;
    readonly returned: number;
    readonly nacked: number;
    readonly closed: number;
    readonly timedOut: number;
  };
}

export interface PrometheusMetricsOptions {
  /**
   * A prom-client `Registry` to register into, e.g. the one your own metrics use (default: a new
   * one, so two services in a process never clash).
   */
  readonly registry?: PrometheusRegistry;
  /** Distinct event types kept as label values; later ones are reported as `other` (default 100). */
  readonly maxEventTypes?: number;
  /** Distinct topic/partition pairs kept per consumer's lag; later ones are `other` (default 1000). */
  readonly maxPartitions?: number;
  /** Also Node's process metrics (CPU, memory, event loop lag) from prom-client (default false). */
  readonly processMetrics?: boolean;
  /** Histogram buckets of handler processing time, in seconds. */
  readonly processingBuckets?: readonly number[];
  /** Histogram buckets of publish time and outbox delay, in seconds. */
  readonly publishBuckets?: readonly number[];
}

export interface PrometheusMetrics extends MetricsSource {
  /** The prom-client `Registry` the series are in (`options.registry` when given). */
  readonly registry: PrometheusRegistry;
  /** The Prometheus text of every series (what `/metrics` serves). */
  text(): Promise<string>;
  /** Reads the relay's counts and health at each scrape, labelled `relay="<name>"` (default `relay`). */
  watchRelay(relay: MeteredRelay, name?: string): void;
  /** Reads the runner's counts, health and (Kafka) lag at each scrape, labelled `consumer="<name>"`. */
  watchConsumer(name: string, runner: MeteredConsumerRunner): void;
  /**
   * The relay options with the publisher and hooks timed per event type (your own hooks still
   * run): `createOutboxRelay(metrics.instrumentRelay({ db, publisher }))`.
   */
  instrumentRelay<O extends { readonly publisher: Publisher; readonly hooks?: OutboxRelayHooks }>(
    options: O,
    name?: string,
  ): O;
  /**
   * A handler that runs `handler` and observes its time per event type and outcome; it has what
   * the delivery core calls (`name`, `subscribes`, `handle`, `skip`). `consumer` defaults to its name.
   */
  instrumentHandler(handler: MessageHandler, consumer?: string): MessageHandler;
  /**
   * Reads a RabbitMQ ConfirmedPublisher's confirm outcomes at each scrape, labelled
   * `publisher="<name>"` (default `relay`): the relay's, or any other the service publishes with.
   */
  watchPublisher(publisher: MeteredPublisher, name?: string): void;
  /**
   * Reads the broker's counts of a consumer's queues or topics at each scrape (work, retry, dead
   * letters): `rabbitMqQueueDepths(connection, routes)` or `kafkaQueueDepths(admin, routes)`.
   */
  watchQueueDepths(source: QueueDepthSource): void;
  /** An `onEvent` hook counting rebalances, commit failures, breaker trips and errors; `next` runs too. */
  consumerEvents<E extends { readonly type: string }>(
    consumer: string,
    next?: (event: E) => void,
  ): (event: E) => void;
}

const DEFAULT_PROCESSING_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];
const DEFAULT_PUBLISH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Snapshot extends SnapshotExtra {
  readonly relays: readonly { name: string; health?: RunnerHealth; counts?: RelayCountsRead }[];
  readonly consumers: readonly {
    name: string;
    health?: RunnerHealth;
    counts?: ReturnType<MeteredConsumerRunner['metrics']>;
    lag?: readonly { topic: string; partition: string; lag: number }[];
  }[];
}
type RelayCountsRead = ReturnType<MeteredRelay['metrics']>;
interface SnapshotExtra {
  readonly publishers: readonly { name: string; stats: MeteredPublisher['stats'] }[];
  /** `depths` undefined: the broker could not be read. */
  readonly queues: readonly { consumer: string; depths?: readonly QueueDepth[] }[];
}

export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = loadPromClient();
  // A PrometheusRegistry is a prom-client Registry by contract (see its documentation).
  const registry = (options.registry as Registry | undefined) ?? new Registry();
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });
  const eventTypes = new BoundedLabel(options.maxEventTypes ?? 100);
  const maxPartitions = options.maxPartitions ?? 1_000;
  const partitionLabels = new Map<string, BoundedLabel>();
  const relays = new Map<string, MeteredRelay>();
  const consumers = new Map<string, MeteredConsumerRunner>();
  const publishers = new Map<string, MeteredPublisher>();
  const queueSources = new Map<string, QueueDepthSource>();

  // One snapshot per scrape: prom-client collects every metric concurrently, and each would
  // otherwise ask every runner for its health (the relay's is a database query).
  let pending: Promise<Snapshot> | undefined;
  function snapshot(): Promise<Snapshot> {
    pending ??= takeSnapshot().finally(() => (pending = undefined));
    return pending;
  }
  async function takeSnapshot(): Promise<Snapshot> {
    // Counts are read before the first await. prom-client reads the histograms synchronously as
    // the scrape starts (they are registered after the first snapshot metric), and a handler run or
    // a publish is observed before its delivery is counted; so one scrape never counts more settled
    // deliveries than it shows observations, however long the health queries below take.
    const relayCounts = new Map([...relays].map(([name, relay]) => [name, relay.metrics()]));
    const consumerCounts = new Map(
      [...consumers].map(([name, runner]) => [name, runner.metrics()]),
    );
    const relayReads = await Promise.all(
      [...relays].map(async ([name, relay]) => ({
        name,
        health: await relay.health().catch(() => undefined),
        counts: relayCounts.get(name)!,
      })),
    );
    const consumerReads = await Promise.all(
      [...consumers].map(async ([name, runner]) => {
        const [health, lag] = await Promise.all([
          runner.health().catch(() => undefined),
          runner.lag === undefined ? undefined : runner.lag().catch(() => undefined),
        ]);
        return {
          name,
          health,
          counts: consumerCounts.get(name),
          lag: lag === undefined ? undefined : ownedLag(name, lag),
        };
      }),
    );
    const queues = await Promise.all(
      [...queueSources.values()].map(async (source) => ({
        consumer: source.consumer,
        depths: await source.depths().catch(() => undefined),
      })),
    );
    return {
      relays: relayReads,
      consumers: consumerReads,
      publishers: [...publishers].map(([name, publisher]) => ({ name, stats: publisher.stats })),
      queues,
    };
  }
  function ownedLag(
    consumer: string,
    lag: Awaited<ReturnType<NonNullable<MeteredConsumerRunner['lag']>>>,
  ): { topic: string; partition: string; lag: number }[] {
    let labels = partitionLabels.get(consumer);
    if (labels === undefined)
      partitionLabels.set(consumer, (labels = new BoundedLabel(maxPartitions)));
    const summed = new Map<string, { topic: string; partition: string; lag: number }>();
    for (const entry of lag) {
      if (entry.assigned === false) continue; // another member of the group reports it
      const key = labels.value(`${entry.topic}\u0000${entry.partition}`);
      const [topic, partition] = key.includes('\u0000') ? key.split('\u0000') : [key, key];
      const row = summed.get(key) ?? { topic: topic!, partition: partition!, lag: 0 };
      row.lag += entry.lag;
      summed.set(key, row);
    }
    return [...summed.values()];
  }

  /** A gauge set from the scrape's snapshot. */
  function snapshotGauge<L extends string>(
    config: Omit<GaugeConfiguration<L>, 'collect'>,
    fill: (snap: Snapshot, set: (labels: Record<L, string>, value: number) => void) => void,
  ): Gauge<L> {
    return new Gauge<L>({
      ...config,
      registers: [registry],
      async collect() {
        const snap = await snapshot();
        this.reset();
        fill(snap, (labels, value) => this.set(labels as never, value));
      },
    });
  }
  /** A counter whose value is a runner's own running total, read from the scrape's snapshot. */
  function snapshotCounter<L extends string>(
    config: Omit<CounterConfiguration<L>, 'collect'>,
    fill: (snap: Snapshot, set: (labels: Record<L, string>, value: number) => void) => void,
  ): Counter<L> {
    return new Counter<L>({
      ...config,
      registers: [registry],
      async collect() {
        const snap = await snapshot();
        this.reset();
        fill(snap, (labels, value) => this.inc(labels as never, value));
      },
    });
  }
  const bit = (flag: boolean | undefined) => (flag === true ? 1 : 0);

  // Health of every runner.
  snapshotGauge(
    {
      name: 'evgen_runner_ready',
      help: 'Whether the runner is ready (1) or not (0), as /readyz',
      labelNames: ['runner'],
    },
    (snap, set) => {
      for (const r of [...snap.relays, ...snap.consumers])
        set({ runner: r.name }, bit(r.health?.ready));
    },
  );
  snapshotGauge(
    {
      name: 'evgen_runner_in_flight',
      help: 'Deliveries or publishes being worked on now',
      labelNames: ['runner'],
    },
    (snap, set) => {
      for (const r of [...snap.relays, ...snap.consumers])
        if (r.health !== undefined) set({ runner: r.name }, r.health.facts.inFlight);
    },
  );
  snapshotGauge(
    {
      name: 'evgen_runner_broker_connected',
      help: 'Whether the runner reaches its broker (0 while it reconnects or publishes fail for unavailability)',
      labelNames: ['runner'],
    },
    (snap, set) => {
      for (const r of [...snap.relays, ...snap.consumers])
        if (r.health !== undefined)
          set({ runner: r.name }, r.health.facts.brokerDisconnectedSince === undefined ? 1 : 0);
    },
  );

  // The outbox and its relays.
  snapshotGauge(
    {
      name: 'evgen_outbox_backlog_rows',
      help: 'Outbox rows READY or PROCESSING',
      labelNames: ['relay'],
    },
    (snap, set) => {
      for (const r of snap.relays) {
        const rows = r.health?.facts.outboxBacklog;
        if (rows !== undefined) set({ relay: r.name }, rows);
      }
    },
  );
  snapshotGauge(
    {
      name: 'evgen_outbox_oldest_unsent_age_seconds',
      help: 'Age of the oldest READY or PROCESSING outbox row (0 when none)',
      labelNames: ['relay'],
    },
    (snap, set) => {
      for (const r of snap.relays) {
        const age = r.health?.facts.oldestUnsentAgeMs;
        if (age !== undefined) set({ relay: r.name }, (age ?? 0) / 1_000);
      }
    },
  );
  snapshotGauge(
    {
      name: 'evgen_outbox_dead_rows',
      help: 'Outbox rows given up on (DEAD), waiting for an operator',
      labelNames: ['relay'],
    },
    (snap, set) => {
      for (const r of snap.relays) {
        const rows = r.health?.facts.deadRows;
        if (rows !== undefined) set({ relay: r.name }, rows);
      }
    },
  );
  snapshotGauge(
    {
      name: 'evgen_outbox_database_reachable',
      help: 'Whether the outbox database answered the backlog query in time',
      labelNames: ['relay'],
    },
    (snap, set) => {
      for (const r of snap.relays)
        set(
          { relay: r.name },
          r.health?.facts.databaseReachable === false || r.health === undefined ? 0 : 1,
        );
    },
  );
  const relayTotal = (
    name: string,
    help: string,
    read: (counts: RelayCountsRead) => number | undefined,
  ) =>
    snapshotCounter({ name, help, labelNames: ['relay'] }, (snap, set) => {
      for (const r of snap.relays) {
        const value = r.counts === undefined ? undefined : read(r.counts);
        if (value !== undefined) set({ relay: r.name }, value);
      }
    });
  relayTotal(
    'evgen_relay_published_total',
    'Outbox rows published and confirmed by the broker',
    (c) => c.published,
  );
  relayTotal(
    'evgen_relay_publish_failures_total',
    'Failed publish attempts (retried later), broker unavailability included',
    (c) => c.failed,
  );
  relayTotal(
    'evgen_relay_publish_unavailable_total',
    'Failed publish attempts that were broker unavailability (no attempt used)',
    (c) => c.unavailable,
  );
  relayTotal('evgen_relay_dead_total', 'Outbox rows moved to DEAD', (c) => c.dead);
  const publishDuration = new Histogram({
    name: 'evgen_relay_publish_duration_seconds',
    help: 'Time from handing a row to the publisher to the broker confirm (or the failure)',
    labelNames: ['relay', 'event_type', 'outcome'],
    buckets: [...(options.publishBuckets ?? DEFAULT_PUBLISH_BUCKETS)],
    registers: [registry],
  });
  const outboxDelay = new Histogram({
    name: 'evgen_outbox_delivery_delay_seconds',
    help: "Time from the event's occurredAt to the broker confirm of its outbox row",
    labelNames: ['relay', 'event_type'],
    buckets: [...(options.publishBuckets ?? DEFAULT_PUBLISH_BUCKETS)],
    registers: [registry],
  });
  const pollInterval = new Gauge({
    name: 'evgen_relay_poll_interval_seconds',
    help: "The relay's current idle wait between claims (adaptive polling)",
    labelNames: ['relay'],
    registers: [registry],
  });
  const relayErrors = new Counter({
    name: 'evgen_relay_errors_total',
    help: 'Database errors in the relay loop and lost LISTEN connections',
    labelNames: ['relay'],
    registers: [registry],
  });

  // Consumers.
  const consumerTotal = (name: string, help: string, key: keyof DeliveryCounts) =>
    snapshotCounter({ name, help, labelNames: ['consumer'] }, (snap, set) => {
      for (const c of snap.consumers)
        if (c.counts !== undefined) set({ consumer: c.name }, c.counts[key]);
    });
  consumerTotal(
    'evgen_consumer_handled_total',
    'Messages handled and settled, duplicates included',
    'handled',
  );
  consumerTotal(
    'evgen_consumer_duplicates_total',
    'Messages the inbox had already (settled, not applied again)',
    'duplicates',
  );
  consumerTotal(
    'evgen_consumer_skipped_total',
    'Messages of types the consumer does not subscribe to, settled without a handler',
    'skipped',
  );
  consumerTotal(
    'evgen_consumer_retried_total',
    'Retries scheduled (retry tier, retry topic or timer)',
    'retried',
  );
  consumerTotal(
    'evgen_consumer_dead_lettered_total',
    'Messages dead-lettered (confirmed)',
    'deadLettered',
  );
  snapshotGauge(
    {
      name: 'evgen_consumer_breaker_open',
      help: 'Whether the circuit breaker is open: a dependency (the database) is away, consumption paused',
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const c of snap.consumers)
        if (c.health !== undefined) set({ consumer: c.name }, bit(c.health.facts.breakerOpen));
    },
  );
  snapshotGauge(
    {
      name: 'evgen_consumer_partitions_assigned',
      help: 'Kafka partitions this member owns',
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const c of snap.consumers) {
        const owned = c.health?.facts.partitionsAssigned;
        if (owned !== undefined) set({ consumer: c.name }, owned);
      }
    },
  );
  snapshotGauge(
    {
      name: 'evgen_consumer_lag_records',
      help: 'Records not handled yet per owned partition (event and retry topics), where the transport knows it',
      labelNames: ['consumer', 'topic', 'partition'],
    },
    (snap, set) => {
      for (const c of snap.consumers)
        for (const row of c.lag ?? [])
          set({ consumer: c.name, topic: row.topic, partition: row.partition }, row.lag);
    },
  );
  snapshotCounter(
    {
      name: 'evgen_consumer_redelivered_total',
      help: "Deliveries the broker flagged redelivered (RabbitMQ: put back by a nack with requeue or unacked on a lost channel; evgen's retry copies are not counted)",
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const c of snap.consumers)
        if (c.counts?.redelivered !== undefined) set({ consumer: c.name }, c.counts.redelivered);
    },
  );
  snapshotCounter(
    {
      name: 'evgen_consumer_fetches_total',
      help: "Fetch requests answered (a Kafka consumer's polls, with records or none): 1 / rate() is the poll interval",
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const c of snap.consumers)
        if (c.counts?.fetches !== undefined) set({ consumer: c.name }, c.counts.fetches);
    },
  );
  snapshotGauge(
    {
      name: 'evgen_consumer_last_fetch_timestamp_seconds',
      help: 'When the Kafka consumer last had a fetch answered (Unix time): time() minus it is how long it has not polled',
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const c of snap.consumers)
        if (c.counts?.lastFetchAt !== undefined)
          set({ consumer: c.name }, c.counts.lastFetchAt / 1_000);
    },
  );

  // RabbitMQ publishers' confirms.
  snapshotCounter(
    {
      name: 'evgen_rabbitmq_publish_confirmed_total',
      help: 'Publishes the broker confirmed and routed',
      labelNames: ['publisher'],
    },
    (snap, set) => {
      for (const p of snap.publishers) set({ publisher: p.name }, p.stats.confirmed);
    },
  );
  snapshotCounter(
    {
      name: 'evgen_rabbitmq_publish_confirm_failures_total',
      help: 'Publishes not confirmed, by reason: returned (mandatory, no queue bound), nacked, closed (channel lost first), timed_out',
      labelNames: ['publisher', 'reason'],
    },
    (snap, set) => {
      for (const p of snap.publishers) {
        set({ publisher: p.name, reason: 'returned' }, p.stats.returned);
        set({ publisher: p.name, reason: 'nacked' }, p.stats.nacked);
        set({ publisher: p.name, reason: 'closed' }, p.stats.closed);
        set({ publisher: p.name, reason: 'timed_out' }, p.stats.timedOut);
      }
    },
  );

  // The broker's own counts of each watched consumer's queues or topics.
  snapshotGauge(
    {
      name: 'evgen_queue_messages',
      help: "Messages waiting in a consumer's queue or topic as the broker counts them, by role: work, retry, dead_letter (RabbitMQ: ready, not unacked; Kafka: after the committed offsets)",
      labelNames: ['consumer', 'queue', 'role'],
    },
    (snap, set) => {
      for (const q of snap.queues)
        for (const d of q.depths ?? [])
          set({ consumer: q.consumer, queue: d.queue, role: d.role }, d.messages);
    },
  );
  snapshotGauge(
    {
      name: 'evgen_queue_consumers',
      help: 'Consumers attached to the queue (RabbitMQ)',
      labelNames: ['consumer', 'queue'],
    },
    (snap, set) => {
      for (const q of snap.queues)
        for (const d of q.depths ?? [])
          if (d.consumers !== undefined) set({ consumer: q.consumer, queue: d.queue }, d.consumers);
    },
  );
  snapshotGauge(
    {
      name: 'evgen_queue_depth_up',
      help: "Whether the broker answered the last read of the consumer's queue depths",
      labelNames: ['consumer'],
    },
    (snap, set) => {
      for (const q of snap.queues) set({ consumer: q.consumer }, q.depths === undefined ? 0 : 1);
    },
  );

  const processing = new Histogram({
    name: 'evgen_consumer_processing_seconds',
    help: 'Handler time per message (the inbox transaction included), by outcome: handled, duplicate, failed',
    labelNames: ['consumer', 'event_type', 'outcome'],
    buckets: [...(options.processingBuckets ?? DEFAULT_PROCESSING_BUCKETS)],
    registers: [registry],
  });
  const eventCounter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['consumer'], registers: [registry] });
  const rebalances = eventCounter(
    'evgen_consumer_rebalances_total',
    'Partition assignments received (Kafka rebalances)',
  );
  const commitFailures = eventCounter(
    'evgen_consumer_commit_failures_total',
    'Offset commits that failed (retried)',
  );
  const breakerTrips = eventCounter(
    'evgen_consumer_breaker_opened_total',
    'Times the circuit breaker opened',
  );
  const consumerErrors = eventCounter(
    'evgen_consumer_errors_total',
    'Errors the runner reported (connection, settle)',
  );
  const restarts = eventCounter(
    'evgen_consumer_reconnects_total',
    'Reconnect attempts after a lost broker connection',
  );

  const eventTypeOf = (raw: unknown): string => {
    const type = (raw as { eventType?: unknown } | null)?.eventType;
    return eventTypes.value(typeof type === 'string' && type !== '' ? type : 'unknown');
  };
  const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

  return {
    registry,
    get contentType() {
      return registry.contentType;
    },
    text: () => registry.metrics(),
    watchRelay(relay, name = 'relay') {
      relays.set(name, relay);
    },
    watchConsumer(name, runner) {
      consumers.set(name, runner);
    },
    watchPublisher(publisher, name = 'relay') {
      publishers.set(name, publisher);
    },
    watchQueueDepths(source) {
      queueSources.set(source.consumer, source);
    },
    instrumentRelay(relayOptions, name = 'relay') {
      const { publisher, hooks = {} } = relayOptions;
      // A new object, not a prototype copy: methods run on the caller's publisher (private fields).
      const observePublish = (
        message: OutboundMessage,
        outcome: 'confirmed' | 'failed',
        start: bigint,
      ) =>
        publishDuration.observe(
          { relay: name, event_type: eventTypeOf(message.envelope), outcome },
          seconds(start),
        );
      const timed: Publisher = {
        async publish(message: OutboundMessage) {
          const start = process.hrtime.bigint();
          try {
            await publisher.publish(message);
          } catch (error) {
            observePublish(message, 'failed', start);
            throw error;
          }
          observePublish(message, 'confirmed', start);
        },
        ...(publisher.probe === undefined ? {} : { probe: () => publisher.probe!() }),
        ...(publisher.publishChain === undefined
          ? {}
          : {
              async publishChain(messages: readonly OutboundMessage[]) {
                const start = process.hrtime.bigint();
                const observeAll = (outcome: (index: number) => 'confirmed' | 'failed') =>
                  messages.forEach((message, index) =>
                    observePublish(message, outcome(index), start),
                  );
                let results: readonly ChainPublishResult[];
                try {
                  results = await publisher.publishChain!(messages);
                } catch (error) {
                  observeAll(() => 'failed');
                  throw error;
                }
                observeAll((index) => (results[index]?.stored === true ? 'confirmed' : 'failed'));
                return results;
              },
            }),
      };
      const observed: OutboxRelayHooks = {
        ...hooks,
        onPublished(message) {
          const occurred = Date.parse(message.envelope.occurredAt);
          if (Number.isFinite(occurred))
            outboxDelay.observe(
              { relay: name, event_type: eventTypeOf(message.envelope) },
              Math.max(0, Date.now() - occurred) / 1_000,
            );
          hooks.onPublished?.(message);
        },
        onIdle(waitMs) {
          pollInterval.set({ relay: name }, waitMs / 1_000);
          hooks.onIdle?.(waitMs);
        },
        onError(error) {
          relayErrors.inc({ relay: name });
          hooks.onError?.(error);
        },
      };
      return { ...relayOptions, publisher: timed, hooks: observed };
    },
    instrumentHandler(handler, consumer = handler.name) {
      const handle = async (raw: unknown, context?: Parameters<MessageHandler['handle']>[1]) => {
        const start = process.hrtime.bigint();
        const labels = { consumer, event_type: eventTypeOf(raw) };
        try {
          const result = await handler.handle(raw, context);
          processing.observe(
            { ...labels, outcome: result === 'duplicate' ? 'duplicate' : 'handled' },
            seconds(start),
          );
          return result;
        } catch (error) {
          processing.observe({ ...labels, outcome: 'failed' }, seconds(start));
          throw error;
        }
      };
      // What the delivery core calls (name, subscribes, handle, skip), each on the caller's
      // handler, so a class with private fields keeps working.
      const timed: MessageHandler = {
        name: handler.name,
        ...(handler.subscribes === undefined ? {} : { subscribes: handler.subscribes }),
        handle,
        ...(handler.skip === undefined
          ? {}
          : { skip: (skipped, context) => handler.skip!(skipped, context) }),
      };
      return timed;
    },
    consumerEvents(consumer, next) {
      const labels = { consumer };
      return (event) => {
        switch (event.type) {
          case 'assigned':
            rebalances.inc(labels);
            break;
          case 'commit-failed':
            commitFailures.inc(labels);
            break;
          case 'paused':
            breakerTrips.inc(labels);
            break;
          case 'error':
          case 'settle-failed':
            consumerErrors.inc(labels);
            break;
          case 'restarting':
            restarts.inc(labels);
            break;
        }
        next?.(event);
      };
    },
  };
}
