/**
 * Where a Pulsar consumer reads and where its copies go, in one place so the runner, the
 * dead-letter source and a set-up script agree:
 *
 *   event topics                                 the catalog's topics of the types it subscribes to
 *   <prefix><consumer>.retry.<tier>              one topic per retry delay tier (`1s`, `250ms`)
 *   <prefix><consumer>.dlt                       the consumer's dead-letter topic
 *   subscription <consumer> on the event and retry topics; `<consumer>.dlq` on the dead-letter
 *   topic, which keeps the letters until they are replayed (a topic without a subscription keeps
 *   nothing under Pulsar's default retention).
 *
 * The names follow the Kafka transport's (`kafka/topic-names.ts`), in the namespace of the
 * consumer's first event topic.
 */
import { kafkaTierLabel } from '../../kafka/topic-names.js';
import { parseTopicName } from '../pulsar-client.js';
import { pulsarRouteTopic } from '../pulsar-publishing.js';
import type { PulsarTopology } from '../pulsar-topology.js';

/** Default retry delay tiers in milliseconds, ascending (the same as RabbitMQ's and Kafka's). */
export const DEFAULT_PULSAR_RETRY_TIERS_MS: readonly number[] = Object.freeze([
  1_000, 10_000, 60_000,
]);

export interface PulsarConsumerRoutes {
  /** The consumer's name (its inbox key and the subscription's name). */
  readonly consumer: string;
  /** The durable subscription on the event and retry topics. Default: the consumer's name. */
  readonly subscription: string;
  /** Full names of the event topics it reads. */
  readonly topics: readonly string[];
  /** Retry tiers, ascending delays; attempt n (n ≥ 2) is a copy on tier min(n − 2, last). */
  readonly retry: readonly { readonly topic: string; readonly delayMs: number }[];
  /** Full name of the dead-letter topic. */
  readonly deadLetter: string;
  /** The subscription that keeps the dead letters (what `evgen dlq` lists and replays). */
  readonly deadLetterSubscription: string;
}

export interface PulsarConsumerRoutesOptions {
  /** Deployment prefix of every topic (the relay's and the producers'). */
  readonly prefix?: string;
  /** Retry tiers in ms, strictly ascending; default 1 s, 10 s, 60 s. */
  readonly retryTiersMs?: readonly number[];
}

/** The routes of one consumer of a generated topology (`pulsarTopology` in `pulsar/topology.ts`). */
export function pulsarConsumerRoutes(
  topology: PulsarTopology,
  consumer: string,
  options: PulsarConsumerRoutesOptions = {},
): PulsarConsumerRoutes {
  const declared = topology.consumers.find((one) => one.name === consumer);
  if (declared === undefined || declared.subscriptions.length === 0) {
    const known = topology.consumers.map((one) => one.name).sort();
    throw new RangeError(
      `Pulsar consumer '${consumer}' subscribes to no Pulsar topic in the catalog (consumers with Pulsar topics: ${known.join(', ') || 'none'})`,
    );
  }
  const topics = [
    ...new Set(declared.subscriptions.map((route) => pulsarRouteTopic(route, options.prefix))),
  ].sort();
  return pulsarConsumerTopics(consumer, topics, options);
}

/** Routes for `consumer` reading `topics`, its own topics beside the first one. */
export function pulsarConsumerTopics(
  consumer: string,
  topics: readonly string[],
  options: PulsarConsumerRoutesOptions = {},
): PulsarConsumerRoutes {
  if (topics.length === 0) throw new RangeError(`Pulsar consumer '${consumer}' needs a topic`);
  const { domain, tenant, namespace } = parseTopicName(topics[0]!);
  const own = (local: string) =>
    `${domain}://${tenant}/${namespace}/${options.prefix ?? ''}${consumer}.${local}`;
  const tiers = options.retryTiersMs ?? DEFAULT_PULSAR_RETRY_TIERS_MS;
  tiers.forEach((delay, index) => {
    kafkaTierLabel(delay);
    if (index > 0 && delay <= tiers[index - 1]!)
      throw new RangeError('retry tiers must be strictly ascending');
  });
  return {
    consumer,
    subscription: consumer,
    topics,
    retry: tiers.map((delayMs) => ({ delayMs, topic: own(`retry.${kafkaTierLabel(delayMs)}`) })),
    deadLetter: own('dlt'),
    deadLetterSubscription: `${consumer}.dlq`,
  };
}
