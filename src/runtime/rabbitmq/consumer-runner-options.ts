/**
 * The RabbitMQ consumer runner's options: the shared ones (delivery/runner-options.ts) and
 * RabbitMQ's section, `rabbitmq` (connection, queues, prefetch, gap wait, reconnecting),
 * resolved once. The old shape, RabbitMQ's settings at the top level, is still accepted.
 */
import type { ChannelModel } from 'amqplib';
import type { BackoffOptions } from '../backoff.js';
import type { MessageHandler } from '../delivery/message-handler.js';
import {
  OptionChecks,
  checkRetryTierFor,
  resolveDeliveryRunnerOptions,
  transportSection,
  type DeliveryRunnerOptions,
  type ResolvedDeliveryRunnerOptions,
} from '../delivery/runner-options.js';
import type { AmqpConnector } from './connector.js';
import type { ConsumerRunnerEvent } from './consumer-runner-types.js';
import type { ConsumerRoutes } from './topology.js';

/** The RabbitMQ runner's own settings, grouped under `rabbitmq`. */
export interface RabbitMqRunnerSettings {
  /**
   * A reconnecting connector, an AMQP URL (the runner then owns a reconnecting connection), or
   * an open connection the caller owns (no reconnect once it is lost).
   */
  readonly connection: AmqpConnector | ChannelModel | string;
  /**
   * The consumer's queues, from `resolveTopology(...).consumers[name]` / `assertTopology`; its
   * `maxAttempts` is the default of `maxAttempts`.
   */
  readonly routes: ConsumerRoutes;
  /**
   * Unacked deliveries at a time. Default 20. Deliveries of one aggregate (same aggregateType and
   * aggregateId) are handled one after the other in delivery order; different aggregates run
   * concurrently, up to this many.
   */
  readonly prefetch?: number | undefined;
  /**
   * How long a message that arrives ahead of a missing version of its aggregate (`ctx.inOrder`'s
   * gap) waits for it WITHOUT PROGRESS of that aggregate, in ms (default 60 000): it is parked on
   * the first delay tier with its attempt unchanged, and the wait restarts whenever a later gap
   * finds the aggregate further along (its predecessors being applied, e.g. one per pass through
   * a backlog). A gap that saw no progress for this long counts as a failed attempt like any
   * retryable error; the whole wait ends 10 × this after the first gap in any case. 0: gaps
   * never wait.
   */
  readonly gapWaitMs?: number | undefined;
  /** Backoff between attempts to rebuild a lost channel or connection. */
  readonly reconnectBackoff?: BackoffOptions | undefined;
}

const RABBITMQ_SETTINGS = [
  'connection',
  'routes',
  'prefetch',
  'gapWaitMs',
  'reconnectBackoff',
] as const satisfies readonly (keyof RabbitMqRunnerSettings)[];

interface RabbitMqRunnerBase extends DeliveryRunnerOptions<ConsumerRunnerEvent> {
  /** Normally a generated inbox-guarded consumer (`createInventoryServiceConsumer(...)`). */
  readonly handler: MessageHandler;
}

/** The shared options and RabbitMQ's settings in their own section. */
export interface GroupedRabbitMqRunnerOptions extends RabbitMqRunnerBase {
  /** RabbitMQ's own settings. */
  readonly rabbitmq: RabbitMqRunnerSettings;
}

/**
 * @deprecated RabbitMQ's settings at the top level, the old shape: group them under `rabbitmq`
 * (`{ handler, maxAttempts, rabbitmq: { connection, routes, prefetch } }`). Still accepted; removed
 * in the next release.
 */
export interface FlatRabbitMqRunnerOptions extends RabbitMqRunnerBase, RabbitMqRunnerSettings {
  /** Absent in the old shape: the settings are at the top level. */
  readonly rabbitmq?: undefined;
}

/** `createRabbitMqConsumerRunner`'s options: the shared ones and a `rabbitmq` section. */
export type ConsumerRunnerOptions =
  | GroupedRabbitMqRunnerOptions
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the old shape, kept one release
  | FlatRabbitMqRunnerOptions;

interface ResolvedConsumerRunnerOptions extends ResolvedDeliveryRunnerOptions<ConsumerRunnerEvent> {
  readonly connection: AmqpConnector | ChannelModel | string;
  readonly routes: ConsumerRoutes;
  readonly handler: MessageHandler;
  readonly prefetch: number;
  readonly gapWaitMs: number;
  readonly reconnectBackoff: BackoffOptions | undefined;
}

/**
 * Per-aggregate lanes keep order at any prefetch, so the prefetch only bounds memory and work in
 * flight. 20 was chosen by measurement (`npm run bench -- rabbitmq`, runner + inbox consumer, 200
 * aggregates, pg pool of 10, medians of 3): relative to prefetch 20, prefetch 1 reached 0.10–0.32×,
 * 10 0.82–1.02×, 50 0.78–0.92×, 100 0.74–0.96× in three runs. Beyond ~20 the database pool (10
 * connections) is the limit, so a larger prefetch only holds more unacked messages.
 */
const DEFAULT_PREFETCH = 20;
const DEFAULT_GAP_WAIT_MS = 60_000;

export function resolveConsumerRunnerOptions(
  options: ConsumerRunnerOptions,
): ResolvedConsumerRunnerOptions {
  const checks: OptionChecks = new OptionChecks('createRabbitMqConsumerRunner');
  const { settings, path } = transportSection<RabbitMqRunnerSettings>(
    checks,
    options,
    'rabbitmq',
    RABBITMQ_SETTINGS,
  );
  const { connection, routes } = settings;
  if (
    connection === undefined ||
    (typeof connection === 'string' ? connection === '' : typeof connection !== 'object')
  )
    checks.fail(`${path}connection`, connection, 'an AMQP URL, a connector or an open connection');
  if (
    routes === null ||
    typeof routes !== 'object' ||
    typeof routes.queue !== 'string' ||
    !Array.isArray(routes.tiers)
  )
    checks.fail(`${path}routes`, routes, 'a consumer of resolveTopology(…).consumers');
  const shared = resolveDeliveryRunnerOptions(checks, options, routes.maxAttempts);
  checkRetryTierFor(checks, shared.maxAttempts, routes.tiers.length, routes.consumer);
  return {
    ...shared,
    connection,
    routes,
    handler: checks.handler('handler', options.handler),
    prefetch: checks.positiveInteger(`${path}prefetch`, settings.prefetch, DEFAULT_PREFETCH),
    gapWaitMs: checks.nonNegativeNumber(
      `${path}gapWaitMs`,
      settings.gapWaitMs,
      DEFAULT_GAP_WAIT_MS,
      true,
    ),
    reconnectBackoff: checks.backoff(`${path}reconnectBackoff`, settings.reconnectBackoff),
  };
}
