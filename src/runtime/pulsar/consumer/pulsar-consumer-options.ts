/**
 * The Pulsar consumer runner's options, types and resolver: the shared ones
 * (delivery/runner-options.ts) and Pulsar's section (client, routes, subscription, back-pressure,
 * the broker's own dead-letter backstop), resolved once at construction.
 */
import type { BackoffOptions } from '../../backoff.js';
import type { DeliveryEvent } from '../../delivery/delivery-event.js';
import type { DeliveryCounts } from '../../delivery/delivery-outcome.js';
import type { DeliveryRunner } from '../../delivery/delivery-runner.js';
import type { MessageHandler } from '../../delivery/message-handler.js';
import {
  OptionChecks,
  checkRetryTierFor,
  resolveDeliveryRunnerOptions,
  type DeliveryRunnerOptions,
  type ResolvedDeliveryRunnerOptions,
} from '../../delivery/runner-options.js';
import type { PulsarClient, PulsarSubscriptionType } from '../pulsar-client.js';
import type { PulsarConsumerRoutes } from './pulsar-consumer-routes.js';

/** The delivery core's events, plus a copy that could not be sent and a copy not due yet. */
export type PulsarConsumerRunnerEvent =
  | DeliveryEvent
  | {
      /** A retry copy or dead letter was not stored: the message stays unacked and is tried again. */
      readonly type: 'settle-failed';
      readonly messageId: string | undefined;
      readonly error: unknown;
    }
  | {
      /** Even a minimal dead letter does not fit: handed to the broker's dead-letter policy. */
      readonly type: 'broker-dead-letter';
      readonly messageId: string | undefined;
      readonly error: unknown;
    };

export interface PulsarConsumerRunnerMetrics extends DeliveryCounts {
  /** Retry copies or dead letters the broker did not store (the message stayed unacked). */
  readonly settleFailures: number;
  /** Messages negatively acknowledged so the broker's dead-letter policy moves them. */
  readonly brokerDeadLettered: number;
  /** Times the circuit breaker stopped consumption. */
  readonly pauses: number;
}

/** `start()` rejects if a subscription cannot be made; `stop()` waits for handlers in flight. */
export type PulsarConsumerRunner = DeliveryRunner<PulsarConsumerRunnerMetrics>;

export interface PulsarConsumerRunnerOptions extends DeliveryRunnerOptions<PulsarConsumerRunnerEvent> {
  /** The Pulsar client route, e.g. `pulsarWebSocketClient({ webServiceUrl })`. */
  readonly client: PulsarClient;
  /** `pulsarConsumerRoutes(pulsarTopology, consumer)`: topics, retry tiers, dead-letter topic. */
  readonly routes: PulsarConsumerRoutes;
  /** Normally a generated inbox-guarded consumer. */
  readonly handler: MessageHandler;
  /**
   * Subscription type on the event topics. Default `Key_Shared`: any number of runners share the
   * subscription and each aggregate (the message key) goes to one of them, in order.
   * `Failover`/`Exclusive` also keep order; `Shared` does not: a version `ctx.inOrder` finds
   * early is then retried through the tiers like any retryable failure, using attempts (gaps wait
   * without attempts only on RabbitMQ, `gapWaitMs`).
   */
  readonly subscriptionType?: PulsarSubscriptionType | undefined;
  /** Where a new subscription starts. Default `Earliest`: nothing published before is missed. */
  readonly initialPosition?: 'Earliest' | 'Latest' | undefined;
  /**
   * Messages per topic handed out and not yet settled (default 100): the bound on memory and on
   * work in flight; messages of one aggregate still run one after the other.
   */
  readonly maxUnsettled?: number | undefined;
  /**
   * The backstop for a message whose dead letter cannot be written at all (larger than the
   * broker's WebSocket frame even without its properties): it is negatively acknowledged and,
   * after this many redeliveries, the broker's own dead-letter policy moves it to the
   * dead-letter topic whole (default 10). Normal retries and dead letters never use it.
   */
  readonly brokerDeadLetterAfter?: number | undefined;
  /** Backoff between tries to store a retry copy or dead letter the broker did not take. */
  readonly settleBackoff?: BackoffOptions | undefined;
}

interface ResolvedPulsarConsumerRunnerOptions extends ResolvedDeliveryRunnerOptions<PulsarConsumerRunnerEvent> {
  readonly client: PulsarClient;
  readonly routes: PulsarConsumerRoutes;
  readonly handler: MessageHandler;
  readonly subscriptionType: PulsarSubscriptionType;
  readonly initialPosition: 'Earliest' | 'Latest';
  readonly maxUnsettled: number;
  readonly brokerDeadLetterAfter: number;
  readonly settleBackoff: BackoffOptions | undefined;
}

const SUBSCRIPTION_TYPES: readonly PulsarSubscriptionType[] = [
  'Exclusive',
  'Failover',
  'Shared',
  'Key_Shared',
];

export function resolvePulsarConsumerRunnerOptions(
  options: PulsarConsumerRunnerOptions,
): ResolvedPulsarConsumerRunnerOptions {
  const checks = new OptionChecks('createPulsarConsumerRunner');
  const { client, routes } = options;
  if (client === null || typeof client !== 'object' || typeof client.consumer !== 'function')
    checks.fail('client', client, 'a Pulsar client (pulsarWebSocketClient(…))');
  if (
    routes === null ||
    typeof routes !== 'object' ||
    !Array.isArray(routes.topics) ||
    routes.topics.length === 0 ||
    !Array.isArray(routes.retry) ||
    typeof routes.deadLetter !== 'string'
  )
    checks.fail('routes', routes, 'the routes of pulsarConsumerRoutes(…)');
  const shared = resolveDeliveryRunnerOptions(checks, options, routes.retry.length + 1);
  checkRetryTierFor(checks, shared.maxAttempts, routes.retry.length, routes.consumer);
  return {
    ...shared,
    client,
    routes,
    handler: checks.handler('handler', options.handler),
    subscriptionType: checks.oneOf(
      'subscriptionType',
      options.subscriptionType,
      SUBSCRIPTION_TYPES,
      'Key_Shared',
    ),
    initialPosition: checks.oneOf(
      'initialPosition',
      options.initialPosition,
      ['Earliest', 'Latest'],
      'Earliest',
    ),
    maxUnsettled: checks.positiveInteger('maxUnsettled', options.maxUnsettled, 100),
    brokerDeadLetterAfter: checks.positiveInteger(
      'brokerDeadLetterAfter',
      options.brokerDeadLetterAfter,
      10,
    ),
    settleBackoff: checks.backoff('settleBackoff', options.settleBackoff),
  };
}
