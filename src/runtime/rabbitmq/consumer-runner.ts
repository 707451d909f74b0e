/**
 * Runs one consumer on its work queue with manual acks.
 *
 * For every delivery:
 *   - the body must be a JSON object with a `messageId`, equal to the AMQP messageId property
 *     when the producer set one; otherwise it goes straight to the dead queue (it can never succeed);
 *   - `handler.handle(body)` runs (normally the inbox-guarded consumer: inbox insert + business
 *     write in one transaction); the delivery is acked only after it resolved, i.e. committed;
 *   - a retryable failure publishes a copy (same body, messageId and headers, `x-evgen-attempt`
 *     + 1, failure times, last error) to the next delay tier, waits for its confirm, then acks;
 *   - a non-retryable failure, or one on the last attempt, publishes the message with its
 *     diagnostics to the dead queue, waits for the confirm, then acks;
 *   - deliveries of one aggregate run one after the other in delivery order (aggregate-lanes.ts),
 *     so concurrency never makes a later version overtake an earlier one; a real gap (an
 *     earlier version missing) parks the message on the first tier without using an attempt,
 *     for at most `gapWaitMs` without progress of its aggregate (delivery/gap-wait.ts);
 *   - a failure that says a dependency is unavailable (database down) puts the delivery back
 *     unchanged and stops consumption for a backoff (circuit-breaker.ts): no attempt is used.
 * Nothing else is ever nacked with requeue. Every copy is fitted to what can be encoded before it
 * is sent (copy-limits.ts: over-long properties and oversized headers dropped and named in
 * `x-evgen-cut`), so a message's content never makes a copy fail. A retry copy that cannot be
 * published becomes a dead letter; a dead letter that is refused is sent again with only evgen's
 * diagnostics and the received headers serialized. Only when the dead queue takes neither (broker
 * or topology trouble) does the delivery stay unacked and the channel restart, so the broker
 * redelivers it after a backoff.
 * Runner headers (`x-evgen-attempt`, …) count only on deliveries evgen itself sent back
 * (received-headers.ts).
 * A lost connection or channel is rebuilt with backoff; `stop()` lets in-flight handlers finish.
 * The lifecycle, the work in flight, the breaker, the counters and the reconnecting are the
 * runner core's (delivery/runner-core.ts); this file is RabbitMQ's source (open a session,
 * consume, cancel, reopen), amqp-session.ts one channel's consuming, amqp-delivery.ts a message
 * as a delivery and amqp-settler.ts its settler.
 */
import type { ConsumeMessage } from 'amqplib';
import { createDeliveryPipeline, type IdentifiedDelivery } from '../delivery/delivery-pipeline.js';
import type { Delivery } from '../delivery/delivery.js';
import { settleOutcome, type OutcomeSettlement } from '../delivery/outcome-settlement.js';
import { RunnerCore } from '../delivery/runner-core.js';
import { AggregateLanes, aggregateKey } from './aggregate-lanes.js';
import { amqpDelivery } from './amqp-delivery.js';
import { AmqpSession } from './amqp-session.js';
import { createAmqpSettler, type AmqpTarget } from './amqp-settler.js';
import {
  createAmqpConnector,
  DEFAULT_RECONNECT_BACKOFF,
  fixedConnector,
  isConnector,
  type AmqpConnector,
} from './connector.js';
import {
  resolveConsumerRunnerOptions,
  type ConsumerRunnerOptions,
} from './consumer-runner-options.js';
import type {
  ConsumerRunner,
  ConsumerRunnerEvent,
  ConsumerRunnerMetrics,
} from './consumer-runner-types.js';

export type { ConsumerRunnerOptions } from './consumer-runner-options.js';
export type {
  ConsumerRunner,
  ConsumerRunnerEvent,
  ConsumerRunnerMetrics,
} from './consumer-runner-types.js';

export function createRabbitMqConsumerRunner(given: ConsumerRunnerOptions): ConsumerRunner {
  const options = resolveConsumerRunnerOptions(given);
  const { routes, handler, prefetch, gapWaitMs } = options;
  // The pipeline decides whether a gap still waits (gap-wait.ts); the settler only parks it.
  const pipeline = createDeliveryPipeline({ ...options, consumer: routes.consumer, gapWaitMs });
  // A URL or a bare connection: the runner makes the connector for each run, so stop() closes
  // it (a connector over a bare connection leaves that connection open).
  const { connection } = options;
  const ownsConnector = typeof connection === 'string' || !isConnector(connection);
  const makeConnector = (): AmqpConnector =>
    typeof connection === 'string'
      ? createAmqpConnector({
          url: connection,
          connectionName: `evgen ${handler.name}`,
          random: options.random,
          timers: options.timers,
        })
      : isConnector(connection)
        ? connection
        : fixedConnector(connection);
  let connector: AmqpConnector | undefined;
  let session: AmqpSession | undefined;
  const lanes = new AggregateLanes();

  const core = new RunnerCore<ConsumerRunnerEvent, typeof COUNTS>(
    {
      open: async (signal) => {
        connector ??= makeConnector();
        await open(signal);
      },
      pause: () => void session?.cancel(),
      async resume() {
        const current = session;
        // No session: the restart opens one, and open() consumes once the breaker is closed.
        if (current === undefined || current.ended || current.consuming) return false;
        await consume(current);
        return true;
      },
      quiesce: async () => session?.cancel(),
      async close() {
        const current = session;
        session = undefined;
        await current?.close();
        if (ownsConnector) await connector?.close();
        if (ownsConnector) connector = undefined;
      },
    },
    { ...options, reconnectDefaults: DEFAULT_RECONNECT_BACKOFF, counts: COUNTS },
  );
  const { breaker, counters, emit, supervisor } = core;
  const settleFailure = createAmqpSettler({
    routes,
    counters,
    counts: core.counts,
    emit,
  });

  /** Opens a channel and consumes (unless the breaker is open); on a stop meanwhile, closes it. */
  async function open(signal: AbortSignal): Promise<void> {
    const model = await connector!.connection();
    const current: AmqpSession = new AmqpSession(
      await model.createChannel(),
      model,
      {
        onError: (error) => emit({ type: 'error', error }),
        onClosed: () => {
          if (session === current) lost(current, 'channel or connection closed');
        },
      },
      options.timers,
    );
    try {
      await current.channel.prefetch(prefetch);
      // While the breaker is open the queue keeps its messages; it resumes consuming.
      if (!signal.aborted && !breaker.isOpen) await consume(current);
    } catch (error) {
      // Not consuming yet: the caller (start or the restart) decides what happens next.
      await current.close();
      throw error;
    }
    if (current.ended) throw new Error(`channel closed while starting to consume ${routes.queue}`);
    // From here on a close of this channel triggers a restart; a stop closes it.
    session = current;
    if (!signal.aborted) emit({ type: 'consuming', queue: routes.queue });
  }

  const consume = (current: AmqpSession) =>
    current.consume(routes.queue, (message) => onDelivery(current, message));

  /** The session is gone (channel closed, consumer cancelled, nothing confirmed): reopen. */
  function lost(current: AmqpSession, why: string): void {
    if (session === current) session = undefined;
    if (!current.ended) void current.close();
    core.restart(new Error(why), () => open(core.signal));
  }

  function onDelivery(current: AmqpSession, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (queue deleted or failed over): start again.
      if (session === current && !core.signal.aborted)
        lost(current, `consumer on ${routes.queue} was cancelled by the broker`);
      return;
    }
    // The broker's own flag: delivered before and not acked (requeued, or a channel was lost).
    if (message.fields.redelivered) core.counts.redelivered++;
    // Identified here, in delivery order, so the aggregate key is known before anything runs.
    const delivery = amqpDelivery(message, routes.queue);
    const identified = pipeline.identify(delivery);
    const key = identified.body !== undefined ? aggregateKey(identified.body) : undefined;
    void core.track(lanes.run(key, () => process(current, message, delivery, identified)));
  }

  function requeue(current: AmqpSession, message: ConsumeMessage): void {
    if (current.requeue(message)) core.counts.requeued++;
  }

  type Target = AmqpTarget & { readonly current: AmqpSession };
  const settlement: OutcomeSettlement<Target> = {
    breaker,
    counters,
    settle: (target) => target.ack(),
    putBack: ({ current, message }) => requeue(current, message),
    async settleFailure(target, outcome) {
      // The dead queue cannot take it (broker or topology trouble, not this message): keep the
      // delivery unacked and rebuild the channel so the broker redelivers it after a backoff.
      if (!(await settleFailure(target, outcome)) && !target.current.ended)
        lost(target.current, `no dead letter confirmed for a delivery on ${routes.queue}`);
    },
    handled({ attempt }, outcome) {
      emit({ type: 'handled', messageId: outcome.messageId, attempt, result: outcome.result });
    },
    skipped(_, outcome) {
      emit({ type: 'skipped', messageId: outcome.messageId, eventType: outcome.eventType });
    },
  };

  async function process(
    current: AmqpSession,
    message: ConsumeMessage,
    delivery: Delivery,
    identified: IdentifiedDelivery,
  ): Promise<void> {
    // The breaker is open: the handler's dependency is down, leave the message in the queue.
    if (breaker.isOpen) {
      requeue(current, message);
      return;
    }
    const outcome = await pipeline.process(delivery, identified);
    const target: Target = {
      current,
      message,
      publisher: current.publisher,
      attempt: delivery.attempt,
      // After a lost channel the delivery tag is void: the broker redelivers, the inbox absorbs it.
      ack: () => {
        if (current.ack(message)) supervisor.healthy();
      },
    };
    await settleOutcome(outcome, target, settlement);
  }

  const metrics = (): ConsumerRunnerMetrics => ({
    ...core.metrics(),
    restarts: supervisor.restarts,
  });
  return core.runner<ConsumerRunner>(handler.name, metrics, {});
}

/** The transport's own counts, beside the delivery counters (see ConsumerRunnerMetrics). */
const COUNTS = { settleFailures: 0, requeued: 0, gapWaits: 0, redelivered: 0 };

/**
 * @deprecated Renamed `createRabbitMqConsumerRunner`, beside `createKafkaConsumerRunner`; this
 * name is removed in the next release.
 */
export const createConsumerRunner = createRabbitMqConsumerRunner;

/** The RabbitMQ runner's types under the names every transport's follow. */
export type RabbitMqConsumerRunner = ConsumerRunner;
export type RabbitMqConsumerRunnerEvent = ConsumerRunnerEvent;
export type RabbitMqConsumerRunnerMetrics = ConsumerRunnerMetrics;
export type RabbitMqConsumerRunnerOptions = ConsumerRunnerOptions;
