/**
 * The RabbitMQ topology evgen needs, in two steps:
 *
 * 1. `RabbitTopology` is what the catalog says (generated into `rabbitmq/topology.ts`): the
 *    domain exchanges and, per consumer, the events it subscribes to.
 * 2. `resolveTopology()` turns it into concrete declarations (names, queue arguments, bindings,
 *    retry tiers) for one deployment. Prefix, delay tiers and queue type are runtime choices, so
 *    tests can isolate names and shorten delays without regenerating code.
 *
 * Per consumer `c` (with prefix `p`):
 *   p<c>              work queue, bound to each subscribed event's exchange + routing key;
 *                     dead-letters (reject / broker delivery limit) to the dead queue
 *   p<c>.retry        direct exchange the runner publishes retry copies and dead letters to
 *   p<c>.retry.<1s>   one TTL queue per delay tier; on expiry the message goes back to p<c>
 *                     only (via the default exchange), so other consumers never see a retry
 *   p<c>.dead         final dead queue
 */

/** One event a consumer subscribes to, with where it is published. */
interface RabbitSubscription {
  readonly eventType: string;
  /** Exchange name as written in the catalog (without prefix). */
  readonly exchange: string;
  readonly routingKey: string;
}

export interface RabbitConsumerTopology {
  /** Consumer name from the catalog (`inventory-service`); also the work queue's name stem. */
  readonly name: string;
  /** Sorted by eventType. */
  readonly subscriptions: readonly RabbitSubscription[];
}

/** The catalog's view of the broker: generated, deterministic, no deployment choices. */
export interface RabbitTopology {
  /** Domain exchanges (durable topic exchanges), sorted. */
  readonly exchanges: readonly string[];
  /** Sorted by name. */
  readonly consumers: readonly RabbitConsumerTopology[];
}

/** Where an event type is published: the generated route table maps event types to these. */
export interface RabbitRoute {
  readonly exchange: string;
  readonly routingKey: string;
}

/** eventType → route, generated from the catalog for producers and the outbox relay. */
export type RabbitRoutes = Readonly<Record<string, RabbitRoute>>;

export type RabbitQueueType = 'classic' | 'quorum';

export interface TopologyOptions {
  /** Prepended to every exchange and queue name (tests isolate themselves with it). Default "". */
  readonly prefix?: string;
  /** Retry delay tiers in milliseconds, ascending. Default 1 s, 10 s, 60 s. */
  readonly tiers?: readonly number[];
  /**
   * Handling attempts per message before it is dead-lettered (first delivery included).
   * Default: one more than the number of tiers; extra retries reuse the last tier.
   */
  readonly maxAttempts?: number;
  /** Queue type of every queue. Default `classic`. */
  readonly queueType?: RabbitQueueType;
  /**
   * Quorum queues only: the broker's `x-delivery-limit` for work queues. It must exceed
   * `maxAttempts` (default `maxAttempts + 10`). evgen's retries publish fresh copies, so the
   * broker's count only grows when one copy is redelivered (consumer crash or connection loss
   * before ack); the limit stops an endless crash loop, and what it removes goes to the dead queue.
   */
  readonly deliveryLimit?: number;
}

const DEFAULT_RETRY_TIERS_MS: readonly number[] = Object.freeze([1_000, 10_000, 60_000]);

/** Routing key on the retry exchange that leads to the dead queue. */
const DEAD_ROUTING_KEY = 'dead';

export interface ExchangeDeclaration {
  readonly name: string;
  readonly type: 'topic' | 'direct';
}

export interface QueueDeclaration {
  readonly name: string;
  readonly role: 'work' | 'retry' | 'dead';
  readonly consumer: string;
  /** `x-…` queue arguments, exactly as declared. */
  readonly arguments: Readonly<Record<string, string | number>>;
}

export interface BindingDeclaration {
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
}

export interface RetryTier {
  readonly delayMs: number;
  readonly queue: string;
  /** Routing key on the consumer's retry exchange. */
  readonly routingKey: string;
}

/** Everything the consumer runner needs to know about its own queues. */
export interface ConsumerRoutes {
  readonly consumer: string;
  readonly queue: string;
  readonly retryExchange: string;
  readonly deadQueue: string;
  readonly deadRoutingKey: string;
  readonly tiers: readonly RetryTier[];
  /** Handling attempts before a retryable failure is dead-lettered. */
  readonly maxAttempts: number;
}

/** Concrete, prefixed declarations for one deployment; `assertTopology` declares exactly these. */
export interface ResolvedTopology {
  readonly prefix: string;
  readonly exchanges: readonly ExchangeDeclaration[];
  readonly queues: readonly QueueDeclaration[];
  readonly bindings: readonly BindingDeclaration[];
  /** Keyed by consumer name (unprefixed). */
  readonly consumers: Readonly<Record<string, ConsumerRoutes>>;
}

/** `1000` → `1s`, `60000` → `60s`, `250` → `250ms`: readable queue-name suffixes. */
function tierLabel(delayMs: number): string {
  return delayMs % 1000 === 0 ? `${delayMs / 1000}s` : `${delayMs}ms`;
}

function checkTiers(tiers: readonly number[]): void {
  if (tiers.length === 0) throw new RangeError('at least one retry tier is required');
  tiers.forEach((delay, index) => {
    if (!Number.isInteger(delay) || delay <= 0)
      throw new RangeError(`retry tier ${delay} must be a positive integer of milliseconds`);
    if (index > 0 && delay <= tiers[index - 1]!)
      throw new RangeError('retry tiers must be strictly ascending');
  });
}

/** Names and arguments for one deployment of `topology`. Pure; declares nothing. */
export function resolveTopology(
  topology: RabbitTopology,
  options: TopologyOptions = {},
): ResolvedTopology {
  const prefix = options.prefix ?? '';
  const tiers = options.tiers ?? DEFAULT_RETRY_TIERS_MS;
  checkTiers(tiers);
  const maxAttempts = options.maxAttempts ?? tiers.length + 1;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError('maxAttempts must be a positive integer');
  const queueType = options.queueType ?? 'classic';
  const deliveryLimit = options.deliveryLimit ?? maxAttempts + 10;
  if (queueType === 'quorum' && deliveryLimit <= maxAttempts) {
    throw new RangeError(
      `deliveryLimit (${deliveryLimit}) must exceed maxAttempts (${maxAttempts})`,
    );
  }
  const typeArguments: Record<string, string> =
    queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : {};

  const exchangeNames = new Set(topology.exchanges);
  for (const consumer of topology.consumers)
    for (const sub of consumer.subscriptions) exchangeNames.add(sub.exchange);
  const exchanges: ExchangeDeclaration[] = [...exchangeNames]
    .sort()
    .map((name) => ({ name: prefix + name, type: 'topic' }));
  const queues: QueueDeclaration[] = [];
  const bindings: BindingDeclaration[] = [];
  const consumers: Record<string, ConsumerRoutes> = {};

  for (const consumer of [...topology.consumers].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    const queue = prefix + consumer.name;
    const retryExchange = `${queue}.retry`;
    const deadQueue = `${queue}.dead`;
    exchanges.push({ name: retryExchange, type: 'direct' });
    queues.push({
      name: queue,
      role: 'work',
      consumer: consumer.name,
      arguments: {
        ...typeArguments,
        'x-dead-letter-exchange': retryExchange,
        'x-dead-letter-routing-key': DEAD_ROUTING_KEY,
        ...(queueType === 'quorum' ? { 'x-delivery-limit': deliveryLimit } : {}),
      },
    });
    const keys = new Set<string>();
    for (const sub of consumer.subscriptions) {
      const key = `${sub.exchange}\u0000${sub.routingKey}`;
      if (keys.has(key)) continue;
      keys.add(key);
      bindings.push({ queue, exchange: prefix + sub.exchange, routingKey: sub.routingKey });
    }
    const retryTiers: RetryTier[] = tiers.map((delayMs) => ({
      delayMs,
      queue: `${queue}.retry.${tierLabel(delayMs)}`,
      routingKey: `retry.${tierLabel(delayMs)}`,
    }));
    for (const tier of retryTiers) {
      queues.push({
        name: tier.queue,
        role: 'retry',
        consumer: consumer.name,
        arguments: {
          ...typeArguments,
          'x-message-ttl': tier.delayMs,
          // Back to this consumer's queue only: the default exchange routes by queue name.
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': queue,
        },
      });
      bindings.push({ queue: tier.queue, exchange: retryExchange, routingKey: tier.routingKey });
    }
    queues.push({
      name: deadQueue,
      role: 'dead',
      consumer: consumer.name,
      arguments: { ...typeArguments },
    });
    bindings.push({ queue: deadQueue, exchange: retryExchange, routingKey: DEAD_ROUTING_KEY });
    consumers[consumer.name] = {
      consumer: consumer.name,
      queue,
      retryExchange,
      deadQueue,
      deadRoutingKey: DEAD_ROUTING_KEY,
      tiers: retryTiers,
      maxAttempts,
    };
  }
  return { prefix, exchanges, queues, bindings, consumers };
}

/** The retry tier for the retry that follows failed attempt `attempt` (1-based); later retries reuse the last tier. */
export function tierForAttempt(routes: ConsumerRoutes, attempt: number): RetryTier {
  const index = Math.min(Math.max(attempt, 1), routes.tiers.length) - 1;
  return routes.tiers[index]!;
}
