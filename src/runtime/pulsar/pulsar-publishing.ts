/**
 * Publishing envelopes on Pulsar, on the topic the catalog gives their event type. As on Kafka the
 * key is the envelope's aggregateId, always (Key_Shared hands one aggregate to one consumer, in
 * order; a partitioned topic routes it to one partition), the payload is the envelope as UTF-8
 * JSON, and the envelope's ids travel as message properties under Kafka's header names
 * (`messageId`, `eventType`, `aggregateId`, …, the CloudEvents `ce_*` ones), so one reader can
 * read both brokers.
 */
import type { Envelope } from '../envelope.js';
import { lookupRoute } from '../route-table.js';
import { kafkaEnvelopeHeaders } from '../kafka/kafka-record.js';
import type { PulsarClient, PulsarOutboundMessage, PulsarProducer } from './pulsar-client.js';

/** Where an event type is published on Pulsar (`pulsarRoutes` generated from the catalog). */
export interface PulsarRoute {
  /** Default `public`. */
  readonly tenant?: string;
  /** Default `default`. */
  readonly namespace?: string;
  readonly topic: string;
  /** Partitions of a partitioned topic; absent: non-partitioned. */
  readonly partitions?: number;
}

/** eventType → route, generated from the catalog (`pulsarRoutes` in `pulsar/publishers.ts`). */
export type PulsarRoutes = Readonly<Record<string, PulsarRoute>>;

/** Looks an event type up in the route table; an unknown type is a programming error, never retried. */
export function pulsarRouteFor(routes: PulsarRoutes, eventType: string): PulsarRoute {
  return lookupRoute(routes, eventType, 'Pulsar topic');
}

/** `persistent://<tenant>/<namespace>/<prefix><topic>`: the full name of a route's topic. */
export function pulsarRouteTopic(route: PulsarRoute, prefix = ''): string {
  return `persistent://${route.tenant ?? 'public'}/${route.namespace ?? 'default'}/${prefix}${route.topic}`;
}

/**
 * The message for `envelope`. Extra properties (trace context stored with an outbox row) come
 * first, so evgen's own names always win.
 */
export function envelopeToPulsarMessage(
  envelope: Envelope,
  properties: Readonly<Record<string, string>> = {},
): PulsarOutboundMessage {
  return {
    key: envelope.aggregateId,
    payload: Buffer.from(JSON.stringify(envelope), 'utf8'),
    properties: kafkaEnvelopeHeaders(envelope, properties),
  };
}

/** One connected producer per topic, opened on first use and shared by every later send. */
export interface PulsarProducers {
  producerFor(topic: string): Promise<PulsarProducer>;
  close(): Promise<void>;
}

export function createPulsarProducers(
  client: PulsarClient,
  options: { readonly sendTimeoutMs?: number } = {},
): PulsarProducers {
  const producers = new Map<string, Promise<PulsarProducer>>();
  return {
    producerFor(topic) {
      let producer = producers.get(topic);
      if (producer === undefined) {
        producer = client.producer(topic, options);
        producers.set(topic, producer);
        // A failed connect is not cached: the next send tries again.
        producer.catch(() => producers.delete(topic));
      }
      return producer;
    },
    async close() {
      const open = [...producers.values()];
      producers.clear();
      await Promise.all(
        open.map((producer) => producer.then((p) => p.close()).catch(() => undefined)),
      );
    },
  };
}

export interface PublishPulsarOptions {
  /** Prepended to the topic name; must match the prefix the topics were created with. */
  readonly prefix?: string;
  /** Extra properties (trace context and the like); evgen's own names cannot be overridden. */
  readonly properties?: Readonly<Record<string, string>>;
}

/**
 * Publishes one envelope on its route; resolves with the broker's message id once the broker
 * stored it, rejects otherwise (then it may or may not be stored: publish again, consumers are
 * idempotent).
 */
export async function publishPulsarEnvelope(
  producers: PulsarProducers,
  envelope: Envelope,
  route: PulsarRoute,
  options: PublishPulsarOptions = {},
): Promise<string> {
  const producer = await producers.producerFor(pulsarRouteTopic(route, options.prefix));
  return producer.send(envelopeToPulsarMessage(envelope, options.properties));
}
