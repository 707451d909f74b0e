/**
 * Publishing envelopes to the topic the catalog gives their event type. Generated helpers
 * (`publishOrderCreatedV2`) and the outbox relay both end here, so no call site spells a topic
 * or picks a key: the key is the envelope's aggregateId, always.
 */
import type { Envelope } from '../envelope.js';
import { rejectedMessageCause } from '../errors.js';
import { lookupRoute } from '../route-table.js';
import type { ChainPublishResult, OutboundMessage, Publisher } from '../publisher.js';
import { frameConfluent } from './confluent-framing.js';
import type { KafkaOutboundRecord, KafkaProducer } from './kafka-client.js';
import { envelopeToKafkaRecord, KAFKA_HEADERS } from './kafka-record.js';
import { kafkaViolations, UnpublishableMessageError } from '../transport-limits.js';
import { kafkaEventTopic } from './topic-names.js';
import { DestinationPresence } from '../destination-presence.js';
import { KafkaTopicMissingError } from './topic-lookup.js';
import {
  checkWireFormatRoutes,
  framingFor,
  type ConfluentWireFormat,
  type KafkaWireFormat,
} from './wire-format-choice.js';

export type { ConfluentWireFormat, KafkaWireFormat } from './wire-format-choice.js';

/** Where an event type is published on Kafka. */
export interface KafkaRoute {
  readonly topic: string;
  /**
   * `confluent`: the catalog frames this event's records (they need `wireFormat.schemaIds`);
   * absent or `json`: the plain envelope JSON.
   */
  readonly wireFormat?: KafkaWireFormat;
}

/** eventType → route, generated from the catalog (`kafkaRoutes` in `kafka/producers.ts`). */
export type KafkaRoutes = Readonly<Record<string, KafkaRoute>>;

export interface PublishKafkaOptions {
  /** Prepended to the topic name; must match the prefix the topics were created with. */
  readonly prefix?: string;
  /** Extra headers (trace context and the like); evgen's own headers cannot be overridden. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The schema ids for the events the catalog frames (see ConfluentWireFormat). Required when the
   * route is marked `wireFormat: 'confluent'`: without it the publish rejects with a TypeError and
   * sends nothing.
   */
  readonly wireFormat?: ConfluentWireFormat;
}

function framedRecord(record: KafkaOutboundRecord, schemaId: number): KafkaOutboundRecord {
  const { value } = record;
  return {
    ...record,
    value: frameConfluent(schemaId, typeof value === 'string' ? Buffer.from(value, 'utf8') : value),
  };
}

/**
 * Publishes one envelope on its route; resolves when the broker acknowledged it (acks = all).
 * A record Kafka cannot carry (see transport-limits.ts) rejects with `UnpublishableMessageError`
 * before anything is sent.
 */
export async function publishKafkaEnvelope(
  producer: KafkaProducer,
  envelope: Envelope,
  route: KafkaRoute,
  options: PublishKafkaOptions = {},
): Promise<void> {
  const topic = kafkaEventTopic(route.topic, options.prefix);
  const record = envelopeToKafkaRecord(envelope, topic, options.headers);
  // A route the catalog frames, without schema ids, throws here: nothing is sent.
  const wireFormat = framingFor(route, envelope.eventType, options.wireFormat);
  if (wireFormat === undefined) return producer.send([carriable(envelope, record)]);
  const id = await wireFormat.schemaIds.idFor(
    envelope.eventType,
    envelope.schemaVersion,
    route.topic,
  );
  return producer.send([carriable(envelope, framedRecord(record, id))]);
}

/**
 * A record not sent because an earlier record of its key, published before it and not yet
 * stored, failed: sending it would put it ahead of that one.
 */
export class KafkaChainHeldBackError extends Error {
  override readonly name = 'KafkaChainHeldBackError';
  constructor(key: string) {
    super(`not sent: an earlier record with key ${key} failed, and this one may not overtake it`);
  }
}

/** The broker's refusal of one record, in words its row's `last_error` keeps. */
function refusedByBroker(
  record: KafkaOutboundRecord,
  rejected: Error,
  error: unknown,
): UnpublishableMessageError {
  const messageId = String(record.headers?.[KAFKA_HEADERS.messageId] ?? '?');
  const answer =
    (rejected as { type?: unknown; apiId?: unknown }).type ??
    (rejected as { apiId?: unknown }).apiId;
  return new UnpublishableMessageError(
    messageId,
    [
      {
        pointer: '',
        keyword: 'broker',
        message: `the broker refused it: ${String(answer)}: ${rejected.message}`,
      },
    ],
    { cause: error },
  );
}

/** The record, or `UnpublishableMessageError` when a broker would refuse it by default. */
function carriable(envelope: Envelope, record: KafkaOutboundRecord): KafkaOutboundRecord {
  const { value } = record;
  const size = typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;
  const violations = kafkaViolations(record.key, record.headers ?? {}, {
    atMost: size,
    exact: () => size,
  });
  if (violations.length > 0) throw new UnpublishableMessageError(envelope.messageId, violations);
  return record;
}

/** Looks an event type up in the route table; an unknown type is a programming error, never retried. */
export function kafkaRouteFor(routes: KafkaRoutes, eventType: string): KafkaRoute {
  return lookupRoute(routes, eventType, 'Kafka topic');
}

export interface KafkaRelayPublisherOptions {
  /** Prepended to every topic name. */
  readonly prefix?: string;
  /** Most records in one send (default 500). */
  readonly maxBatchSize?: number;
  /**
   * Sends handed to the producer at once (default 1). Both adapters send one at a time (see
   * `serial-producer.ts`), so with 1 everything that arrives while a send is awaited goes out
   * together in the next one. Records of one aggregate are never in two of them at once.
   */
  readonly maxInFlightSends?: number;
  /**
   * The schema ids for the events the catalog frames (routes marked `wireFormat: 'confluent'`, or
   * `eventTypes`). Checked against `routes` when the publisher is created: marked routes without
   * it, or it without any marked route or `eventTypes`, throw a TypeError. Ids are resolved once per event
   * version (the first row of a version waits for the registry; later rows do not call it). While
   * the registry cannot give an id (down at start-up, version not pushed), publishes of rows
   * that need it fail as an outage: the relay keeps them and retries; nothing is sent unframed.
   * Rows keep their order: each publish takes its turn after the ones before it got their id.
   */
  readonly wireFormat?: ConfluentWireFormat;
}

/**
 * The outbox relay's `Publisher` for Kafka. A row's publish resolves only after the broker
 * acknowledged its record (the producer must be idempotent with acks = all, the default of both
 * adapters), so the relay marks it SENT only then.
 *
 * Throughput: publishes that arrive in the same tick, or while `maxInFlightSends` sends are in
 * flight, are gathered into the next send, so the relay's parallel aggregates share requests.
 * Order: a record waits until the previous record of its key settled, so two sends never hold
 * records of one key. `publishChain` (the relay's rows of one aggregate) puts its records in one
 * send, in order: same key → same partition (murmur2) → one record batch, which the partition
 * appends whole or not at all. A chain longer than `maxBatchSize` continues in the next send,
 * and when a send fails, the chain's records after it are rejected unsent
 * (`KafkaChainHeldBackError`), so what the broker stores of a chain is always a prefix of it.
 * So the per-aggregate order the relay keeps is the order consumers read.
 */
export function kafkaRelayPublisher(
  producer: KafkaProducer,
  routes: KafkaRoutes,
  options: KafkaRelayPublisherOptions = {},
): Publisher {
  const maxBatchSize = options.maxBatchSize ?? 500;
  const maxInFlightSends = options.maxInFlightSends ?? 1;
  if (!Number.isInteger(maxInFlightSends) || maxInFlightSends < 1) {
    throw new RangeError(`maxInFlightSends must be a positive integer (got ${maxInFlightSends})`);
  }
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) {
    throw new RangeError(`maxBatchSize must be a positive integer (got ${maxBatchSize})`);
  }
  checkWireFormatRoutes(routes, options.wireFormat);
  /** The records of one `publishChain` call: once one fails, the rest must not be sent. */
  interface Chain {
    failed: boolean;
  }
  interface Pending {
    readonly record: KafkaOutboundRecord;
    resolve(): void;
    reject(error: unknown): void;
    /** Sent in a send of its own: its batch was refused for one record's sake. */
    readonly alone?: boolean;
    readonly chain?: Chain;
  }
  const keyOf = (pending: Pending) => `${pending.record.topic}\0${pending.record.key}`;
  /** Waiting to be sent, in arrival order. */
  let queue: Pending[] = [];
  /** Keys with a record in flight. */
  const inFlight = new Set<string>();
  let sending = 0;

  /** Rejects, unsent, the waiting records whose chain has a failed record before them. */
  const holdBackFailedChains = (): void => {
    queue = queue.filter((pending) => {
      if (pending.chain?.failed !== true) return true;
      pending.reject(new KafkaChainHeldBackError(String(pending.record.key)));
      return false;
    });
  };

  const pump = (): void => {
    if (sending >= maxInFlightSends || queue.length === 0) return;
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    /** The chain (or undefined: a lone publish) each key in the batch came with. */
    const keys = new Map<string, Chain | undefined>();
    /** Keys with a record left waiting: their later records wait too. */
    const waiting = new Set<string>();
    for (const pending of queue) {
      const key = keyOf(pending);
      const joins =
        batch.length === 0 ||
        (batch.length < maxBatchSize && pending.alone !== true && batch[0]!.alone !== true);
      // Two records of one key share a send only as one chain (one record batch, appended whole
      // to their partition), and never join a send while a record of their key is in flight.
      const keyFits =
        !keys.has(key) || (pending.chain !== undefined && keys.get(key) === pending.chain);
      if (joins && keyFits && !inFlight.has(key) && !waiting.has(key)) {
        keys.set(key, pending.chain);
        batch.push(pending);
      } else {
        waiting.add(key);
        rest.push(pending);
      }
    }
    if (batch.length === 0) return;
    queue = rest;
    sending += 1;
    for (const key of keys.keys()) inFlight.add(key);
    producer
      .send(batch.map((pending) => pending.record))
      .then(
        () => batch.forEach((pending) => pending.resolve()),
        (error: unknown) => {
          // The broker refused the whole send for one record's sake (its size): each record goes
          // again alone, so only that one fails. Ahead of the queue, so each key keeps its order.
          const rejected = rejectedMessageCause(error);
          if (rejected !== undefined && batch.length > 1) {
            queue = [...batch.map((pending) => ({ ...pending, alone: true })), ...queue];
            return;
          }
          const reason =
            rejected !== undefined ? refusedByBroker(batch[0]!.record, rejected, error) : error;
          for (const pending of batch) {
            pending.reject(reason);
            if (pending.chain !== undefined) pending.chain.failed = true;
          }
          holdBackFailedChains();
        },
      )
      .finally(() => {
        for (const key of keys.keys()) inFlight.delete(key);
        sending -= 1;
        pump();
      });
  };

  const enqueue = (record: KafkaOutboundRecord, chain?: Chain): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (chain?.failed === true) {
        reject(new KafkaChainHeldBackError(String(record.key)));
        return;
      }
      queue.push({ record, resolve, reject, ...(chain !== undefined ? { chain } : {}) });
      // Let publishes started in the same tick join this send.
      queueMicrotask(pump);
    });

  /** Which topics exist, for producers that can tell (destination-presence.ts). */
  const presence =
    producer.topicExists === undefined
      ? undefined
      : new DestinationPresence(
          (topic) => producer.topicExists!(topic),
          (topic) => new KafkaTopicMissingError(topic),
        );

  /** Publishes waiting for a schema id, in arrival order (a chain keeps that order). */
  let resolutions = 0;
  let idTurn: Promise<unknown> = Promise.resolve();

  /**
   * The record to send for a message: at once, or once its schema id is known (after the ids of
   * the publishes before it). Throws or rejects for a message that cannot be sent.
   */
  const recordFor = (
    message: OutboundMessage,
  ): KafkaOutboundRecord | Promise<KafkaOutboundRecord> => {
    const { envelope } = message;
    const route = kafkaRouteFor(routes, envelope.eventType);
    const wireFormat = framingFor(route, envelope.eventType, options.wireFormat);
    const record = envelopeToKafkaRecord(
      envelope,
      kafkaEventTopic(route.topic, options.prefix),
      message.headers,
    );
    // A topic not known to exist yet is asked about first: a missing one fails this record alone.
    const present = presence?.require(record.topic) ?? true;
    if (present !== true) return present.then(() => framedFor(envelope, route, wireFormat, record));
    return framedFor(envelope, route, wireFormat, record);
  };

  /** The record as sent: framed when the route says so (its schema id resolved in turn). */
  const framedFor = (
    envelope: Envelope,
    route: KafkaRoute,
    wireFormat: ConfluentWireFormat | undefined,
    record: KafkaOutboundRecord,
  ): KafkaOutboundRecord | Promise<KafkaOutboundRecord> => {
    const { eventType, schemaVersion } = envelope;
    if (wireFormat === undefined) return carriable(envelope, record);
    const { schemaIds } = wireFormat;
    const cached = schemaIds.cachedId(eventType, schemaVersion);
    if (cached !== undefined && resolutions === 0)
      return carriable(envelope, framedRecord(record, cached));
    resolutions += 1;
    const step = idTurn
      .then(() => schemaIds.idFor(eventType, schemaVersion, route.topic))
      .then((id) => carriable(envelope, framedRecord(record, id)));
    const settled = () => {
      resolutions -= 1;
    };
    idTurn = step.then(settled, settled);
    return step;
  };

  const probe = producer.probe?.bind(producer);
  return {
    // The relay's reconnect probe: a producer connected again after the sends that failed.
    ...(probe !== undefined ? { probe } : {}),
    publish(message: OutboundMessage): Promise<void> {
      let record: KafkaOutboundRecord | Promise<KafkaOutboundRecord>;
      try {
        record = recordFor(message);
      } catch (error) {
        return Promise.reject(error);
      }
      return record instanceof Promise ? record.then((r) => enqueue(r)) : enqueue(record);
    },
    async publishChain(
      messages: readonly OutboundMessage[],
    ): Promise<readonly ChainPublishResult[]> {
      const chain: Chain = { failed: false };
      const sends: Promise<void>[] = [];
      for (const message of messages) {
        try {
          const record = recordFor(message);
          const sent = enqueue(record instanceof Promise ? await record : record, chain);
          // Settled below; handled now, since it may fail while a later record awaits its id.
          sent.catch(() => undefined);
          sends.push(sent);
        } catch (error) {
          // This one cannot be sent, so none after it may be (those before it may).
          sends.push(Promise.reject(error));
          break;
        }
      }
      const outcomes = await Promise.allSettled(sends);
      return messages.map((message, index): ChainPublishResult => {
        const outcome = outcomes[index];
        if (outcome === undefined)
          return {
            stored: false,
            error: new KafkaChainHeldBackError(message.envelope.aggregateId),
          };
        return outcome.status === 'fulfilled'
          ? { stored: true }
          : { stored: false, error: outcome.reason };
      });
    },
  };
}
