/**
 * Runs one inbox-guarded consumer on Pulsar, over the client interface (pulsar-client.ts; the
 * WebSocket adapter today).
 *
 * - The event topics are read on one durable subscription, `Key_Shared` by default: runners
 *   sharing it split the aggregates (the message key) between them, each key in order. Inside a
 *   runner, messages of one key run one after the other (aggregate lanes), different keys
 *   concurrently, at most `maxUnsettled` per topic handed out.
 * - A message is acknowledged only after the handler resolved, i.e. after the inbox transaction
 *   committed; a duplicate resolves `'duplicate'` and is acknowledged the same way.
 * - Retries use evgen's own tiers, not Pulsar's retry-letter topic: a retryable failure writes a
 *   copy (same key, payload and properties, `evgen-attempt` + 1, the failure history) to the
 *   consumer's retry topic of its tier, delivered by the broker only after the tier's delay
 *   (delayed delivery); the original is acknowledged once the broker stored the copy, so the
 *   aggregate's later messages are not held up. Why not the retry-letter topic: it is a feature of
 *   the Java client (`reconsumeLater`), which the WebSocket API does not offer, and it counts
 *   attempts in `RECONSUMETIMES` with one fixed delay, where evgen needs tiers and a trusted
 *   attempt count it shares with RabbitMQ and Kafka.
 * - A dead letter is written by the runner to the consumer's dead-letter topic with evgen's
 *   diagnostics (Kafka's `evgen-*` names) and Pulsar's `REAL_TOPIC`/`ORIGIN_MESSAGE_ID`, then the
 *   original is acknowledged: the broker's dead-letter policy could only copy the message, not
 *   say why it failed. It stays the backstop for a message whose dead letter cannot be written at
 *   all (larger than the WebSocket frame even without its properties): that one is negatively
 *   acknowledged and moved whole by the broker after `brokerDeadLetterAfter` redeliveries. A
 *   malformed, oversized or hostile message is a dead letter at once, never a loop.
 * - A copy the broker did not store (broker away, timeout) is tried again with backoff; the
 *   message stays unacknowledged meanwhile and is redelivered if the runner stops, so nothing is
 *   lost and nothing acknowledged early.
 * - A dependency outage (database down) uses no attempt: the message is kept, unacknowledged,
 *   consumption pauses (no permits returned to the broker) and the kept messages run again when
 *   the circuit breaker closes.
 * Runner-owned properties are believed only on the consumer's own retry topics.
 * The lifecycle, the work in flight, the breaker and the counters are the runner core's
 * (delivery/runner-core.ts); this file is Pulsar's source and settler.
 */
import { backoffDelay } from '../../backoff.js';
import { createDeliveryPipeline } from '../../delivery/delivery-pipeline.js';
import {
  settleOutcome,
  type FailedOutcome,
  type OutcomeSettlement,
} from '../../delivery/outcome-settlement.js';
import { RunnerCore } from '../../delivery/runner-core.js';
import { isRejectedMessageError } from '../../errors.js';
import { AggregateLanes } from '../../rabbitmq/aggregate-lanes.js';
import { sleep } from '../../sleep.js';
import type {
  PulsarConsumer,
  PulsarInboundMessage,
  PulsarOutboundMessage,
} from '../pulsar-client.js';
import { createPulsarProducers, type PulsarProducers } from '../pulsar-publishing.js';
import {
  resolvePulsarConsumerRunnerOptions,
  type PulsarConsumerRunner,
  type PulsarConsumerRunnerEvent,
  type PulsarConsumerRunnerOptions,
} from './pulsar-consumer-options.js';
import {
  deadLetterProperties,
  minimalCopy,
  PULSAR_CONSUMER_PROPERTIES as P,
  retryCopyProperties,
} from './pulsar-copies.js';
import { PULSAR_MESSAGE_ID_HINT, pulsarDelivery } from './pulsar-delivery.js';

const SETTLE_BACKOFF = { baseMs: 100, capMs: 5_000, jitter: 0.2 };

interface Target {
  readonly consumer: PulsarConsumer;
  readonly message: PulsarInboundMessage;
  readonly trusted: boolean;
  readonly attempt: number;
}

export function createPulsarConsumerRunner(
  given: PulsarConsumerRunnerOptions,
): PulsarConsumerRunner {
  const options = resolvePulsarConsumerRunnerOptions(given);
  const { client, routes, handler, now } = options;
  const pipeline = createDeliveryPipeline({
    ...options,
    consumer: routes.consumer,
    messageIdHint: PULSAR_MESSAGE_ID_HINT,
  });
  const tierByTopic = new Map(routes.retry.map((tier) => [tier.topic, tier]));
  const lanes = new AggregateLanes();
  let consumers: PulsarConsumer[] = [];
  let producers: PulsarProducers | undefined;
  /** Kept while the breaker is open, unacknowledged: run again when it closes. */
  let kept: { consumer: PulsarConsumer; message: PulsarInboundMessage }[] = [];
  /** Retry copies that arrived before their due time (a broker without delayed delivery). */
  const early = new Set<ReturnType<typeof setTimeout>>();
  let taking = false;

  const core = new RunnerCore<PulsarConsumerRunnerEvent, typeof COUNTS>(
    {
      async open(signal) {
        producers = createPulsarProducers(client, { sendTimeoutMs: 10_000 });
        // The dead-letter subscription exists before the first letter: a topic without one keeps
        // nothing under Pulsar's default retention.
        const keeper = client.consumer({
          topics: [routes.deadLetter],
          subscription: routes.deadLetterSubscription,
          subscriptionType: 'Shared',
          maxUnsettled: 1,
        });
        await keeper.start({ onMessage: () => undefined });
        await keeper.close();
        const subscribe = async (topics: readonly string[], shared: boolean) => {
          if (topics.length === 0 || signal.aborted) return;
          const consumer = client.consumer({
            topics,
            subscription: routes.subscription,
            // Retry copies promise no order, and delayed delivery needs a shared subscription.
            subscriptionType: shared ? 'Shared' : options.subscriptionType,
            initialPosition: options.initialPosition,
            maxUnsettled: options.maxUnsettled,
            deadLetter: {
              maxRedeliverCount: options.brokerDeadLetterAfter,
              topic: routes.deadLetter,
            },
            consumerName: `evgen ${handler.name}`,
          });
          consumers.push(consumer);
          await consumer.start({
            onMessage: (message) => receive(consumer, message),
            onError: (error) => emit({ type: 'error', error }),
          });
        };
        taking = true;
        await subscribe(routes.topics, false);
        await subscribe([...tierByTopic.keys()], true);
      },
      pause: () => consumers.forEach((consumer) => consumer.pause()),
      async resume(): Promise<undefined> {
        consumers.forEach((consumer) => consumer.resume());
        for (const { consumer, message } of kept.splice(0)) receive(consumer, message);
        return undefined;
      },
      async quiesce() {
        taking = false;
        for (const timer of early) clearTimeout(timer);
        early.clear();
      },
      async close() {
        taking = false;
        const closing = consumers;
        consumers = [];
        // Kept and unsettled messages are redelivered by the broker once the sockets close.
        kept = [];
        await Promise.all(
          closing.map((consumer) =>
            consumer.close().catch((error: unknown) => emit({ type: 'error', error })),
          ),
        );
        await producers?.close();
        producers = undefined;
      },
    },
    { ...options, counts: COUNTS },
  );
  const { breaker, counters, counts, emit } = core;

  function receive(consumer: PulsarConsumer, message: PulsarInboundMessage): void {
    // The key is the aggregate id (evgen's producers and relay): one lane per aggregate.
    void core.track(lanes.run(message.key ?? undefined, () => process(consumer, message)));
  }

  async function process(consumer: PulsarConsumer, message: PulsarInboundMessage): Promise<void> {
    // Stopping: leave it unacknowledged, the broker redelivers it to the next consumer.
    if (!taking) return;
    if (breaker.isOpen) {
      kept.push({ consumer, message });
      return;
    }
    const tier = tierByTopic.get(message.topic);
    const trusted = tier !== undefined;
    if (tier !== undefined) {
      // Its own due time, but never later than its tier's delay after it was stored: a forged
      // or broken property cannot hold a message back.
      const latest = message.publishTime + tier.delayMs;
      const due = Date.parse(message.properties[P.retryDueAt] ?? '');
      const wait = Math.min(Number.isNaN(due) ? latest : due, latest) - now();
      if (wait > 0) {
        const timer = setTimeout(() => {
          early.delete(timer);
          receive(consumer, message);
        }, wait);
        early.add(timer);
        return;
      }
    }
    const attemptText = trusted ? message.properties[P.attempt] : undefined;
    const attempt =
      attemptText !== undefined && /^\d{1,6}$/.test(attemptText)
        ? Math.max(1, Number(attemptText))
        : 1;
    const outcome = await pipeline.process(pulsarDelivery(message, attempt));
    await settleOutcome(outcome, { consumer, message, trusted, attempt }, settlement);
  }

  /**
   * Stores a copy; tries again with backoff while the broker does not answer. `refused`: the
   * broker or the client refused it for what it is (too large), the same way every time.
   */
  async function store(
    topic: string,
    copy: PulsarOutboundMessage,
    messageId: string | undefined,
  ): Promise<'stored' | 'refused' | 'stopped'> {
    for (let failures = 1; ; failures++) {
      try {
        await (await producers!.producerFor(topic)).send(copy);
        return 'stored';
      } catch (error) {
        if (isRejectedMessageError(error) || (error as { retryable?: unknown }).retryable === false)
          return 'refused';
        counts.settleFailures++;
        emit({ type: 'settle-failed', messageId, error });
        const delay = backoffDelay(failures, options.settleBackoff, SETTLE_BACKOFF);
        if (taking) await sleep(delay, core.signal);
        // Stopping: the message stays unacknowledged and is redelivered.
        if (!taking || core.signal.aborted) return 'stopped';
      }
    }
  }

  async function deadLetter(target: Target, outcome: FailedOutcome): Promise<void> {
    const { consumer, message, trusted } = target;
    const { letter } = outcome;
    for (const minimal of [false, true]) {
      const stored = await store(
        routes.deadLetter,
        {
          key: message.key ?? message.messageId,
          payload: message.payload,
          properties: deadLetterProperties(message, trusted, letter, minimal),
        },
        outcome.messageId,
      );
      if (stored === 'stopped') return;
      if (stored === 'stored') {
        consumer.ack(message);
        counters.settled({ ...outcome, kind: 'dead-letter' });
        emit({
          type: 'dead-lettered',
          messageId: outcome.messageId,
          attempts: letter.attempts,
          error: outcome.error,
        });
        return;
      }
    }
    // Not even the payload alone fits a frame: the broker's own dead-letter policy moves it whole.
    consumer.nack(message);
    counts.brokerDeadLettered++;
    emit({ type: 'broker-dead-letter', messageId: outcome.messageId, error: outcome.error });
  }

  const settlement: OutcomeSettlement<Target> = {
    breaker,
    counters,
    settle: ({ consumer, message }) => consumer.ack(message),
    putBack: ({ consumer, message }) => kept.push({ consumer, message }),
    async settleFailure(target, outcome) {
      if (outcome.kind === 'dead-letter') return deadLetter(target, outcome);
      const { consumer, message, trusted } = target;
      const tier = routes.retry[Math.min(outcome.attempt - 1, routes.retry.length - 1)]!;
      const properties = retryCopyProperties(
        message,
        trusted,
        outcome.failure,
        outcome.attempt + 1,
        now() + tier.delayMs,
      );
      let stored: 'stored' | 'refused' | 'stopped' = 'refused';
      // Too large for a frame as it is: again with only evgen's properties.
      for (const copy of [properties, minimalCopy(properties, outcome.failure)]) {
        if (stored !== 'refused') break;
        stored = await store(
          tier.topic,
          {
            key: message.key ?? message.messageId,
            payload: message.payload,
            properties: copy,
            deliverAfterMs: tier.delayMs,
          },
          outcome.messageId,
        );
      }
      if (stored === 'stopped') return;
      // A retry becomes a dead letter only when its copy cannot be sent.
      if (stored === 'refused') return deadLetter(target, outcome);
      consumer.ack(message);
      counters.settled(outcome);
      emit({
        type: 'retried',
        messageId: outcome.messageId,
        attempt: outcome.attempt,
        delayMs: tier.delayMs,
        error: outcome.error,
      });
    },
    handled({ attempt }, { messageId, result }) {
      emit({ type: 'handled', messageId, attempt, result });
    },
    skipped(_, { messageId, eventType }) {
      emit({ type: 'skipped', messageId, eventType });
    },
  };

  return core.runner<PulsarConsumerRunner>(handler.name, () => core.metrics(), {});
}

/** The transport's own counts, beside the delivery counters (see PulsarConsumerRunnerMetrics). */
const COUNTS = { settleFailures: 0, brokerDeadLettered: 0 };
