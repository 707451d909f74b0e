/**
 * Pulsar's dead-letter source: a consumer's dead-letter topic, read on its `<consumer>.dlq`
 * subscription (the one the runner creates so the topic keeps its letters). Listing reads the
 * subscription's backlog without acknowledging anything, so every letter stays; a replay writes
 * the selected letters back to the consumer's first retry topic (same key, payload and messageId,
 * attempt back to 1, `evgen-replays` + 1, the failure history kept: through the inbox again) and
 * only then acknowledges them on the dead-letter subscription, which removes them; the others stay.
 * A call reads the whole backlog (or its first `limit` letters) on one reader holding them all
 * unacknowledged, which the broker sends in pages of `pageSize`; one reader may hold at most the
 * broker's `maxUnackedMessagesPerConsumer` (50 000 by default), so a larger backlog needs `limit`.
 */
import {
  deadLetterRecord,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../../delivery/dead-letter-source.js';
import type { PulsarClient, PulsarInboundMessage } from '../pulsar-client.js';
import { createPulsarProducers } from '../pulsar-publishing.js';
import { PULSAR_CONSUMER_PROPERTIES as P } from './pulsar-copies.js';
import type { PulsarConsumerRoutes } from './pulsar-consumer-routes.js';

export interface PulsarDeadLetterSourceOptions {
  /** The Pulsar client route the letters are read and replayed with. */
  readonly client: PulsarClient;
  /** The broker's HTTP base URL: the subscription's backlog is read through the admin API. */
  readonly webServiceUrl: string;
  /** Extra admin request headers, e.g. `{ Authorization: 'Bearer <token>' }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A consumer's routes: `pulsarConsumerRoutes(pulsarTopology, consumer)`. */
  readonly routes: (
    consumer: string,
  ) => Pick<PulsarConsumerRoutes, 'deadLetter' | 'deadLetterSubscription' | 'retry' | 'topics'>;
  /** How long one read of the backlog may take (default 30 000 ms). */
  readonly timeoutMs?: number;
  /**
   * Read and replay at most this many letters per call, the subscription's first ones (default:
   * every letter), like the other transports' `limit`.
   */
  readonly limit?: number;
  /** Letters the broker sends at a time while a call reads the backlog (default 1 000). */
  readonly pageSize?: number;
}

/** The properties of one dead-lettering, left off a replayed copy (the history stays). */
const DIAGNOSTICS: ReadonlySet<string> = new Set([
  P.errorType,
  P.errorMessage,
  P.attempts,
  P.consumer,
  P.deadLetteredAt,
  P.traceId,
  P.retryDueAt,
  P.cut,
  P.realTopic,
  P.originMessageId,
]);

function record(consumer: string, letter: PulsarInboundMessage): DeadLetterRecord {
  const p = letter.properties;
  const originTopic = p[P.originalTopic] ?? p[P.realTopic];
  const integer = (name: string) => (/^\d{1,9}$/.test(p[name] ?? '') ? Number(p[name]) : undefined);
  return deadLetterRecord({
    transport: 'pulsar',
    consumer,
    messageId: p.messageId,
    eventType: p.eventType,
    diagnostics: {
      errorType: p[P.errorType],
      errorMessage: p[P.errorMessage],
      attempts: integer(P.attempts),
      firstFailureAt: p[P.firstFailureAt],
      lastFailureAt: p[P.lastFailureAt],
      deadLetteredAt: p[P.deadLetteredAt],
      traceId: p[P.traceId],
      replays: integer(P.replays),
    },
    origin:
      originTopic !== undefined
        ? `topic ${originTopic}, message ${p[P.originalMessageId] ?? p[P.originMessageId] ?? '?'}`
        : undefined,
    headers: p,
    body: letter.payload.toString('utf8'),
  });
}

export function pulsarDeadLetterSource(options: PulsarDeadLetterSourceOptions): DeadLetterSource {
  const { client } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pageSize = options.pageSize ?? 1_000;
  for (const [name, value] of [
    ['limit', options.limit],
    ['pageSize', pageSize],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0))
      throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
  const missing = new Map<string, string>();

  /** The subscription's backlog, or undefined when the topic or subscription does not exist. */
  async function backlog(consumer: string): Promise<number | undefined> {
    const routes = options.routes(consumer);
    const path = routes.deadLetter.replace('://', '/');
    const url = `${options.webServiceUrl.replace(/\/+$/, '')}/admin/v2/${path}/stats`;
    const response = await fetch(url, {
      headers: { ...options.headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status === 404) return undefined;
    if (!response.ok)
      throw new Error(
        `reading the stats of ${routes.deadLetter}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`,
      );
    const stats = (await response.json()) as {
      subscriptions?: Record<string, { msgBacklog?: number }>;
    };
    return stats.subscriptions?.[routes.deadLetterSubscription]?.msgBacklog;
  }

  /** Reads the letters; `then` runs with them and the reading consumer still open. */
  async function read<T>(
    consumer: string,
    then: (
      letters: PulsarInboundMessage[],
      ack: (letter: PulsarInboundMessage) => void,
    ) => Promise<T>,
    empty: T,
  ): Promise<T> {
    const routes = options.routes(consumer);
    const count = await backlog(consumer);
    if (count === undefined) {
      missing.set(consumer, routes.deadLetter);
      return empty;
    }
    const wanted = Math.min(count, options.limit ?? count);
    // One reader holds every letter it reads: a second reader on the subscription would not see
    // the ones the first one's broker-side queue fetched ahead.
    const reader = client.consumer({
      topics: [routes.deadLetter],
      subscription: routes.deadLetterSubscription,
      subscriptionType: 'Shared',
      maxUnsettled: Math.max(1, wanted),
      prefetch: Math.min(pageSize, Math.max(1, wanted)),
    });
    const letters = new Map<string, PulsarInboundMessage>();
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    await reader.start({
      onMessage(letter) {
        letters.set(letter.messageId, letter);
        if (letters.size >= wanted) done();
      },
    });
    try {
      if (wanted > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `read ${letters.size} of the ${wanted} letters on ${routes.deadLetter} (subscription ${routes.deadLetterSubscription}) within ${timeoutMs} ms: is another reader holding them, or are there more than the broker's maxUnackedMessagesPerConsumer (give a limit)?`,
                ),
              ),
            timeoutMs,
          );
        });
        await Promise.race([all, late]).finally(() => clearTimeout(timer));
      }
      const sorted = [...letters.values()].sort((a, b) => a.publishTime - b.publishTime);
      return await then(sorted, (letter) => reader.ack(letter));
    } finally {
      // Unacknowledged letters go back to the subscription.
      await reader.close();
    }
  }

  return {
    transport: 'pulsar',
    list: (consumer) =>
      read(consumer, async (letters) => letters.map((letter) => record(consumer, letter)), []),
    replay(consumer, select) {
      const routes = options.routes(consumer);
      const target = routes.retry[0]?.topic ?? routes.topics[0]!;
      return read(
        consumer,
        async (letters, ack) => {
          const producers = createPulsarProducers(client);
          const replayed: string[] = [];
          try {
            for (const letter of letters) {
              const chosen = record(consumer, letter);
              if (!select(chosen)) continue;
              const now = new Date().toISOString();
              const properties: Record<string, string> = {};
              for (const [name, value] of Object.entries(letter.properties))
                if (!DIAGNOSTICS.has(name)) properties[name] = value;
              properties[P.attempt] = '1';
              properties[P.replays] = String((chosen.replays ?? 0) + 1);
              properties[P.replayedAt] = now;
              const producer = await producers.producerFor(target);
              await producer.send({
                key: letter.key ?? letter.messageId,
                payload: letter.payload,
                properties,
              });
              // Removed from the dead letters only once the copy is stored.
              ack(letter);
              replayed.push(chosen.messageId ?? letter.messageId);
            }
          } finally {
            await producers.close();
          }
          return { replayed, kept: letters.length - replayed.length };
        },
        { replayed: [], kept: 0 },
      );
    },
    missing: () => [...missing].map(([consumer, deadQueue]) => ({ consumer, deadQueue })),
    close: () => Promise.resolve(),
  };
}
